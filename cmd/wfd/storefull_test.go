//go:build linux

package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestHealthWhenStoreCannotGrow fills a real `wfd serve`'s disk as far as
// its store is concerned: the process's file size limit (RLIMIT_FSIZE,
// which needs no privileges, unlike a small file system) is set to the
// store's size, so every commit that must grow the file fails in the
// kernel (EFBIG, as ENOSPC on a full disk). The health Watch says
// NOT_SERVING; the "checkpoint failed" lines stay a few; once the limit is
// lifted the server says SERVING again by itself and calls succeed.
func TestHealthWhenStoreCannotGrow(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs wfd serve")
	}
	bin := buildWfd(t)
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := startWfd(t, bin, data)
	c := srv.client()
	watch := healthWatch(ctx, t, srv)
	if !watch.Receive() || watch.Msg().GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health Watch: first message %v, %v", watch.Msg(), watch.Err())
	}
	statuses := make(chan healthpb.HealthCheckResponse_ServingStatus, 100)
	go func() {
		defer close(statuses)
		for watch.Receive() {
			statuses <- watch.Msg().GetStatus()
		}
	}()
	// waitStatus waits for the Watch to say want, calling during (if not
	// nil) meanwhile.
	waitStatus := func(want healthpb.HealthCheckResponse_ServingStatus, during func()) {
		t.Helper()
		deadline := time.After(time.Minute)
		var busy <-chan time.Time // ready at once while there is work
		for {
			if during != nil {
				during()
				busy = time.After(0)
			}
			select {
			case st, ok := <-statuses:
				if !ok {
					t.Fatalf("health Watch ended: %v", watch.Err())
				}
				if st == want {
					return
				}
			case <-deadline:
				t.Fatalf("health Watch: no %v within a minute\n%s", want, srv.out.String())
			case <-busy:
			}
		}
	}

	fi, err := os.Stat(filepath.Join(data, "wfd.db"))
	if err != nil {
		t.Fatal(err)
	}
	pid := srv.cmd.Process.Pid
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(fi.Size()), Max: unix.RLIM_INFINITY}, &old); err != nil {
		t.Skipf("cannot limit the server's file size: %v", err)
	}
	began := time.Now()
	big := structpb.NewStringValue(strings.Repeat("x", 32<<10))
	n, failed := 0, 0
	var lastErr error
	call := func() {
		n++
		_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: fmt.Sprintf("full-%05d", n),
			Input: &structpb.Struct{Fields: map[string]*structpb.Value{"pad": big}}})
		if err != nil {
			if connect.CodeOf(err) != connect.CodeUnavailable {
				t.Fatalf("RunWorkflow on a full store: %v, want Unavailable", err)
			}
			failed++
			lastErr = err
		}
	}
	waitStatus(healthpb.HealthCheckResponse_NOT_SERVING, call)
	t.Logf("NOT_SERVING after %d calls in %v; a call failed with %v", n, time.Since(began).Round(time.Millisecond), lastErr)
	// Clients that keep calling: many failures, few lines.
	for range 200 {
		call()
	}

	// Room again: SERVING without any call, then calls succeed.
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &old, nil); err != nil {
		t.Fatal(err)
	}
	waitStatus(healthpb.HealthCheckResponse_SERVING, nil)
	if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "after"}); err != nil {
		t.Fatal(err)
	}
	out := srv.out.String()
	lines := strings.Count(out, `msg="checkpoint failed"`)
	if max := 2 + int(time.Since(began)/(5*time.Second)); lines == 0 || lines > max || failed < 100 {
		t.Fatalf("%d 'checkpoint failed' lines in %v for %d failed calls, want 1 to %d (and at least 100 failed calls)\n%s",
			lines, time.Since(began), failed, max, out)
	}
	t.Logf("%d calls failed, logged as %d 'checkpoint failed' lines", failed, lines)
	for _, want := range []string{"store cannot commit", "file too large", "store commits again"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not say %q\n%s", want, out)
		}
	}
	srv.stop(t)
}

// healthWatch opens a grpc.health.v1 Watch stream on the server.
func healthWatch(ctx context.Context, t *testing.T, p *wfdProc) *connect.ServerStreamForClient[healthpb.HealthCheckResponse] {
	t.Helper()
	client := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
		p.http, "http://"+p.addr+"/grpc.health.v1.Health/Watch", connect.WithGRPC())
	s, err := client.CallServerStream(ctx, connect.NewRequest(&healthpb.HealthCheckRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
