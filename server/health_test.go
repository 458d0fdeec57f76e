package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
)

// TestHealth checks grpc.health.v1 as a load balancer sees it: SERVING
// while the server runs, NotFound for a service it does not have, and
// NOT_SERVING once its store is unavailable or it is shutting down.
func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(ts *testServer) // nil: a healthy server
		want  healthpb.HealthCheckResponse_ServingStatus
	}{
		{"running", nil, healthpb.HealthCheckResponse_SERVING},
		{"store unavailable", func(ts *testServer) {
			if err := ts.store.Close(); err != nil {
				t.Fatal(err)
			}
		}, healthpb.HealthCheckResponse_NOT_SERVING},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, serverConfig{workflows: testWorkflows()})
			check := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
				ts.http, "http://"+ts.addr+"/grpc.health.v1.Health/Check", connect.WithGRPC())
			if tc.spoil != nil {
				tc.spoil(ts)
			}
			for _, service := range []string{"", wfdv1connect.WorkflowServiceName} {
				res, err := check.CallUnary(ctxT(t), connect.NewRequest(&healthpb.HealthCheckRequest{Service: service}))
				if err != nil {
					t.Fatalf("Check(%q): %v", service, err)
				}
				if got := res.Msg.GetStatus(); got != tc.want {
					t.Errorf("Check(%q) = %v, want %v", service, got, tc.want)
				}
			}
			_, err := check.CallUnary(ctxT(t), connect.NewRequest(&healthpb.HealthCheckRequest{Service: "no.such.Service"}))
			wantCode(t, err, connect.CodeNotFound, "")
		})
	}
}

// TestHealthAfterClose serves Server.Handler from an http.Server of the
// embedder's (which, unlike Serve's, does not end calls when the server
// closes): once the server is closed, checks say NOT_SERVING.
func TestHealthAfterClose(t *testing.T) {
	store, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	srv, err := server.New(ctxT(t), server.Options{Store: store, Workflows: testWorkflows()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	check := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
		hs.Client(), hs.URL+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	status := func() healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		res, err := check.CallUnary(ctxT(t), connect.NewRequest(&healthpb.HealthCheckRequest{}))
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		return res.Msg.GetStatus()
	}
	if got := status(); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("before Close: %v", got)
	}
	if err := srv.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("after Close: %v, want NOT_SERVING", got)
	}
}

// logRecorder is a slog.Handler that keeps every record.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecorder) WithGroup(string) slog.Handler            { return r }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}

// find returns the records with message msg.
func (r *logRecorder) find(msg string) []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []slog.Record
	for _, rec := range r.recs {
		if rec.Message == msg {
			out = append(out, rec)
		}
	}
	return out
}

func attrInt(rec slog.Record, key string) int64 {
	var v int64 = -1
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.Int64()
			return false
		}
		return true
	})
	return v
}

// TestHealthFollowsCommits makes commits fail as on a full disk (all but
// tiny ones): a grpc-go health client (Check and Watch) sees NOT_SERVING,
// the server's probe commits (as big as the commits that failed) do not
// make it SERVING while they fail, and the repeated "checkpoint failed"
// lines are throttled to a few, which count what they held back. Once
// writes succeed again the server says SERVING by itself (no call needs to
// commit first), and the next commit logs the count of failures the
// throttle held back.
func TestHealthFollowsCommits(t *testing.T) {
	ctx := ctxT(t)
	real, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = real.Close() }()
	// A full disk as bbolt meets it: a commit that fits in the pages the
	// file has free succeeds, a bigger one fails.
	var room atomic.Int64
	room.Store(math.MaxInt64)
	var probesFailed, checkpointsFailed atomic.Int64
	diskFull := fmt.Errorf("%w: bolt: write wfd.db: %w", persistence.ErrUnavailable, syscall.ENOSPC)
	store := writeThrough(real, func(ctx context.Context, changes ...persistence.Change) error {
		size := 0
		for _, c := range changes {
			size += len(c.Snapshot)
			for _, r := range c.Records {
				size += len(r.Data)
			}
		}
		if int64(size) > room.Load() {
			if len(changes) == 1 && strings.HasPrefix(changes[0].Handler.ID, "wfd-health-probe-") {
				probesFailed.Add(1)
			} else {
				checkpointsFailed.Add(int64(len(changes)))
			}
			return diskFull
		}
		return real.Write(ctx, changes...)
	})
	logs := &logRecorder{}
	srv, err := server.New(ctx, server.Options{Store: store, Workflows: testWorkflows(), Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, l, 5*time.Second) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()

	cc, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cc.Close() }()
	hc := healthpb.NewHealthClient(cc)
	check := func() healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		res, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		return res.GetStatus()
	}
	watch, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: wfdv1connect.WorkflowServiceName})
	if err != nil {
		t.Fatal(err)
	}
	next := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		res, err := watch.Recv()
		if err != nil || res.GetStatus() != want {
			t.Fatalf("Watch: %v, %v; want %v", res, err, want)
		}
	}
	next(healthpb.HealthCheckResponse_SERVING)
	if got := check(); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check before the disk fills: %v", got)
	}

	// The disk is full: every call that must commit fails with Unavailable.
	room.Store(64)
	began := time.Now()
	c := wfdv1connect.NewWorkflowServiceClient(h2cClient(), "http://"+l.Addr().String(), connect.WithGRPC())
	const calls = 300
	var wg sync.WaitGroup
	var n atomic.Int64
	for range 8 {
		wg.Go(func() {
			for {
				i := n.Add(1) - 1
				if i >= calls {
					return
				}
				_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: fmt.Sprintf("full-%03d", i)})
				if connect.CodeOf(err) != connect.CodeUnavailable {
					t.Errorf("RunWorkflow on a full disk: %v, want Unavailable", err)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	next(healthpb.HealthCheckResponse_NOT_SERVING)
	if got := check(); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Check while commits fail: %v", got)
	}
	// At least one failed checkpoint per call, a line per 5 s interval (and
	// one more for an interval that began at the end).
	lines := logs.find("checkpoint failed")
	if max := 2 + int(elapsed/(5*time.Second)); len(lines) == 0 || len(lines) > max {
		t.Fatalf("%d checkpoint failed lines in %v for %d failed calls; want 1 to %d", len(lines), elapsed, calls, max)
	}

	// The server's probe commits are as big as the commits that failed:
	// they fail too, although a small one would fit.
	testwait.For(t, "two failed probe commits", func() bool { return probesFailed.Load() >= 2 })
	if got := check(); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Check after failed probe commits: %v", got)
	}

	// Space again: the server's own probe commit finds it.
	room.Store(math.MaxInt64)
	next(healthpb.HealthCheckResponse_SERVING)
	if got := check(); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check once commits succeed: %v", got)
	}
	// Commits go on; once the interval is over, one says how many
	// failures the throttle held back. Every failure is on a line or
	// counted by one.
	var again []slog.Record
	for i := 0; len(again) == 0; i++ {
		if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: fmt.Sprintf("after-%d", i)}); err != nil {
			t.Fatal(err)
		}
		again = logs.find("checkpoints commit again")
		time.Sleep(10 * time.Millisecond)
	}
	lines = logs.find("checkpoint failed")
	counted := int64(len(lines)) + attrInt(again[0], "suppressed")
	for _, l := range lines {
		counted += attrInt(l, "suppressed")
	}
	if failed := checkpointsFailed.Load(); failed < calls || counted != failed || len(again) != 1 {
		t.Fatalf("%d checkpoints failed; %d 'checkpoint failed' lines and %d 'checkpoints commit again' lines count %d", failed, len(lines), len(again), counted)
	}
	t.Logf("%d failed checkpoints in %v logged as %d lines", counted, elapsed.Round(time.Millisecond), len(lines))
}

// TestLogsWhileCommitsFlap: a store at the edge of full fails every other
// commit. The server goes NOT_SERVING and back in turn, but its log stays
// a few lines per interval (each counting those it held back), not a line
// or two per commit.
func TestLogsWhileCommitsFlap(t *testing.T) {
	ctx := ctxT(t)
	real, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = real.Close() }()
	var writes, failed atomic.Int64
	store := writeThrough(real, func(ctx context.Context, changes ...persistence.Change) error {
		if writes.Add(1)%2 == 0 {
			failed.Add(1)
			return fmt.Errorf("%w: bolt: write wfd.db: %w", persistence.ErrUnavailable, syscall.ENOSPC)
		}
		return real.Write(ctx, changes...)
	})
	logs := &logRecorder{}
	addr := serveWith(t, server.Options{Store: store, Workflows: testWorkflows(), Logger: slog.New(logs)})
	c := wfdv1connect.NewWorkflowServiceClient(h2cClient(), "http://"+addr, connect.WithGRPC())
	began := time.Now()
	for i := range 200 {
		// Half the commits fail, some of them a call's: the error is no
		// matter here.
		_, _ = c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: fmt.Sprintf("flap-%03d", i)})
	}
	max := 2 + int(time.Since(began)/(5*time.Second))
	for _, l := range []struct {
		msg string
		min int // recoveries depend on which commits fail: maybe none
	}{
		{"checkpoint failed", 1},
		{"store cannot commit; health is NOT_SERVING until it can", 1},
		{"store commits again; health is SERVING", 0},
	} {
		if n := len(logs.find(l.msg)); n < l.min || n > max {
			t.Errorf("%d %q lines for %d failed commits in %v, want %d to %d", n, l.msg, failed.Load(), time.Since(began), l.min, max)
		}
	}
}
