//go:build linux

package main_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/namespace"
)

// TestCrashSIGKILL checks that a SIGKILL loses nothing that was
// acknowledged, over two kills on the same data directory:
//
//  1. Park 200 approval handlers, answer the even half, then kill with
//     SIGKILL in the middle of a burst of calls from 16 workers (echo and
//     fanin handlers started, approval handlers started and answered).
//  2. Restart. Every handler whose RunWorkflow was acknowledged exists;
//     every acknowledged answer took effect (the handler completes with
//     approved=true; a step run in progress at the kill runs again); the
//     odd half is running and idle, waiting for "approval"; a handler
//     whose call was not acknowledged is absent or makes progress, never
//     failed. Then answer the odd half (they were idle at the kill, so the
//     restart left them in the store: each answer loads one) and kill
//     again midway.
//  3. Restart. Every answer acknowledged before the second kill took
//     effect; the rest of the odd half is still idle or completed, and
//     completes when answered now. Every completed handler's stream
//     replays in full, sequence numbers 1..last_seq without gaps, ending
//     with HandlerFinished. SIGTERM then stops the server cleanly.
func TestCrashSIGKILL(t *testing.T) {
	crashSIGKILL(t, "")
}

// TestCrashSIGKILLNamespace is TestCrashSIGKILL in namespace acme (wfd
// serve --namespace acme, on a bbolt file of its own): what a namespace's
// store acknowledged survives the kills, and the default namespace holds
// none of it.
func TestCrashSIGKILLNamespace(t *testing.T) {
	crashSIGKILL(t, "acme", "--namespace", "acme")
}

// TestCrashSIGKILLPostgres is TestCrashSIGKILL with the handlers in a
// PostgreSQL database (wfd serve --store): what COMMIT acknowledged
// survives the kills.
func TestCrashSIGKILLPostgres(t *testing.T) {
	crashSIGKILL(t, "", "--store", pgtest.NewDatabase(t))
}

// crashSIGKILL runs the kills and checks of TestCrashSIGKILL on servers
// started with extra flags, with calls in namespace ns ("": none named).
func crashSIGKILL(t *testing.T, ns string, extra ...string) {
	if testing.Short() {
		t.Skip("builds wfd and kills it: not in -short mode")
	}
	bin := buildWfd(t)
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*testwait.Timeout)
	defer cancel()

	// 1. 200 parked handlers, the even half answered, a burst, SIGKILL.
	srv := startWfd(t, bin, data, extra...)
	c := srv.clientIn(ns)
	const parked = 200
	ids := make([]string, parked)
	for i := range ids {
		ids[i] = fmt.Sprintf("crash-a-%03d", i)
	}
	parallel(t, 16, parked, func(i int) error {
		_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: ids[i], Input: input(i)})
		return err
	})
	waitAllIdle(ctx, t, c, parked)
	parallel(t, 16, parked/2, func(i int) error {
		_, err := c.SendEvent(ctx, answer(ids[2*i])) // returns once durable
		return err
	})

	// The burst: 16 workers start echo and fanin handlers, and approval
	// handlers that they answer as soon as they park. Once 150 calls were
	// acknowledged, the worker that next sees a fanin RunWorkflow
	// acknowledged sends SIGKILL at once, while the others are mid-call.
	acks := newAcks()
	var next atomic.Int64
	srv.killDuring(t, func(ctx context.Context, kill func()) {
		burst(ctx, c, &next, acks, 150, kill)
	})
	snap := acks.snapshot()
	var done, started, unacked int
	for _, a := range snap {
		switch {
		case a.answered || a.echo && a.started:
			done++
		case a.started:
			started++
		default:
			unacked++
		}
	}
	t.Logf("first kill: burst had %d handlers acknowledged that must complete, %d approval handlers started only, %d calls unacknowledged",
		done, started, unacked)

	// 2. Restart: check, answer the odd half, SIGKILL midway.
	srv = startWfd(t, bin, data, extra...)
	c = srv.clientIn(ns)
	srv.logRecovery(t)
	var completed []string
	for i := 0; i < parked; i += 2 {
		waitCompleted(ctx, t, c, ids[i])
		completed = append(completed, ids[i])
	}
	for i := 1; i < parked; i += 2 {
		h := get(ctx, t, c, ids[i])
		w := h.GetIdle().GetWaiters()
		if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || len(w) != 1 || w[0].GetEventType() != "approval" {
			t.Fatalf("unanswered %s after the restart: %v", ids[i], h)
		}
	}
	for id, a := range snap {
		switch {
		case a.answered || a.echo && a.started:
			waitCompleted(ctx, t, c, id)
			completed = append(completed, id)
		default:
			// Started but the answer not acknowledged, or not even the
			// start: absent (only without an acknowledged start), idle
			// awaiting its answer, or completed; never failed.
			if wf := waitSettled(ctx, t, c, id, a.started); wf != nil && wf.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
				completed = append(completed, id)
			}
		}
	}
	odd := make([]string, 0, parked/2)
	for i := 1; i < parked; i += 2 {
		odd = append(odd, ids[i])
	}
	var answered sync.Map
	var nAnswered atomic.Int64
	var nextOdd atomic.Int64
	srv.killDuring(t, func(ctx context.Context, kill func()) {
		for {
			i := int(nextOdd.Add(1) - 1)
			if i >= len(odd) || ctx.Err() != nil {
				return
			}
			if _, err := c.SendEvent(ctx, answer(odd[i])); err != nil {
				return
			}
			answered.Store(odd[i], true)
			if nAnswered.Add(1) >= 40 {
				kill()
			}
		}
	})
	t.Logf("second kill: %d of %d answers to released handlers acknowledged", nAnswered.Load(), len(odd))

	// 3. Restart: acknowledged answers took effect; answer the rest now.
	srv = startWfd(t, bin, data, extra...)
	c = srv.clientIn(ns)
	srv.logRecovery(t)
	for _, id := range odd {
		if _, ok := answered.Load(id); !ok {
			h := waitSettled(ctx, t, c, id, true)
			if h.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
				completed = append(completed, id) // the answer landed; only its acknowledgement was lost
				continue
			}
			if _, err := c.SendEvent(ctx, answer(id)); err != nil {
				t.Fatalf("answering %s now: %v", id, err)
			}
		}
		waitCompleted(ctx, t, c, id)
		completed = append(completed, id)
	}

	// Every completed handler's stream replays in full, 1..last_seq.
	var restored atomic.Int64
	parallel(t, 8, len(completed), func(i int) error {
		r, err := checkReplay(ctx, c, completed[i])
		if r {
			restored.Add(1)
		}
		return err
	})
	t.Logf("%d completed streams replayed in full; %d of them hold a HandlerRestored record", len(completed), restored.Load())
	if ns != "" {
		// The default namespace's store got none of it.
		list, err := srv.client().ListHandlers(ctx, &wfdv1.ListHandlersRequest{})
		if err != nil || len(list.GetHandlers()) != 0 {
			t.Fatalf("default namespace after the kills in %s: %d handlers, %v; want none", ns, len(list.GetHandlers()), err)
		}
	}
	srv.stop(t)
}

// burst starts handlers until ctx is done or the server goes away: in
// turn an echo handler, a fanin handler (several steps, so several commits
// after RunWorkflow returns), and an approval handler that it answers as
// soon as it is idle.
//
// Once killAfter calls were acknowledged, it calls kill right after a fanin
// RunWorkflow returns.
func burst(ctx context.Context, c wfdv1connect.WorkflowServiceClient, next *atomic.Int64, acks *acks, killAfter int, kill func()) {
	for ctx.Err() == nil {
		n := int(next.Add(1))
		if wf := []string{"", "echo", "fanin"}[n%3]; wf != "" {
			id := fmt.Sprintf("crash-%s-%05d", wf, n)
			acks.call(id, true)
			if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: wf, HandlerId: id, Input: input(n)}); err != nil {
				return
			}
			acks.started(id)
			if wf == "fanin" && acks.count() >= killAfter {
				kill()
			}
			continue
		}
		id := fmt.Sprintf("crash-b-%05d", n)
		acks.call(id, false)
		res, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id, Input: input(n)})
		if err != nil {
			return
		}
		acks.started(id)
		for h := res.GetHandler(); h.GetIdle() == nil; {
			time.Sleep(500 * time.Microsecond)
			g, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
			if err != nil {
				return
			}
			h = g.GetHandler()
		}
		if _, err := c.SendEvent(ctx, answer(id)); err != nil {
			return
		}
		acks.answered(id)
	}
}

// acks records which burst calls were made and which were acknowledged.
type acks struct {
	mu sync.Mutex
	m  map[string]ack
	n  int
}

// ack: echo is set for handlers that complete without an answer (echo,
// fanin).
type ack struct{ echo, started, answered bool }

func newAcks() *acks { return &acks{m: map[string]ack{}} }

func (a *acks) call(id string, echo bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.m[id] = ack{echo: echo}
}

func (a *acks) started(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := a.m[id]
	v.started = true
	a.m[id] = v
	a.n++
}

func (a *acks) answered(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := a.m[id]
	v.answered = true
	a.m[id] = v
	a.n++
}

func (a *acks) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

func (a *acks) snapshot() map[string]ack {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]ack, len(a.m))
	for k, v := range a.m {
		out[k] = v
	}
	return out
}

var recoveredRE = regexp.MustCompile(`msg="recovered handlers".*`)

func input(i int) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{"n": structpb.NewNumberValue(float64(i))}}
}

func answer(id string) *wfdv1.SendEventRequest {
	return &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "approval", Data: &structpb.Struct{
		Fields: map[string]*structpb.Value{"approved": structpb.NewBoolValue(true)},
	}}}
}

// parallel runs fn(0..n-1) on w goroutines and fails the test on the first
// error.
func parallel(t *testing.T, w, n int, fn func(i int) error) {
	t.Helper()
	var next atomic.Int64
	errs := make(chan error, w)
	for range w {
		go func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					errs <- nil
					return
				}
				if err := fn(i); err != nil {
					errs <- fmt.Errorf("item %d: %w", i, err)
					return
				}
			}
		}()
	}
	var first error
	for range w {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		t.Fatal(first)
	}
}

func get(ctx context.Context, t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) *wfdv1.Handler {
	t.Helper()
	res, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatalf("GetHandler %s: %v", id, err)
	}
	return res.GetHandler()
}

// waitAllIdle waits until n approval handlers are idle.
func waitAllIdle(ctx context.Context, t *testing.T, c wfdv1connect.WorkflowServiceClient, n int) {
	t.Helper()
	deadline := time.Now().Add(testwait.Timeout)
	for {
		res, err := c.ListHandlers(ctx, &wfdv1.ListHandlersRequest{Workflow: "approval", IdleOnly: true, PageSize: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetHandlers()) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d handlers idle", len(res.GetHandlers()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitSettled waits until the handler is completed, or running and idle
// (waiting for its answer), and returns it; failed or cancelled fails the
// test. A handler that does not exist is nil, or fails the test when
// mustExist.
func waitSettled(ctx context.Context, t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, mustExist bool) *wfdv1.Handler {
	t.Helper()
	deadline := time.Now().Add(testwait.Timeout)
	for {
		res, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
		if connect.CodeOf(err) == connect.CodeNotFound && !mustExist {
			return nil
		}
		if err != nil {
			t.Fatalf("GetHandler %s: %v", id, err)
		}
		h := res.GetHandler()
		switch h.GetStatus() {
		case wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED:
			return h
		case wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING:
			if h.GetIdle() != nil {
				return h
			}
		default:
			t.Fatalf("%s: %v", id, h)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s neither completed nor idle: %v", id, h)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitCompleted follows the handler's stream to its end and checks that it
// completed with approved=true (approval) or at all (echo).
func waitCompleted(ctx context.Context, t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, testwait.Timeout)
	defer cancel()
	s, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		t.Fatalf("StreamEvents %s: %v", id, err)
	}
	defer func() { _ = s.Close() }()
	for s.Receive() {
		if f := s.Msg().GetRecord().GetHandlerFinished(); f != nil {
			if f.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
				t.Fatalf("%s finished %v: %s", id, f.GetStatus(), f.GetError())
			}
			if v, ok := f.GetResult().GetFields()["approved"]; ok && !v.GetBoolValue() {
				t.Fatalf("%s completed with %v", id, f.GetResult())
			}
			return
		}
	}
	t.Fatalf("stream of %s ended without HandlerFinished: %v", id, s.Err())
}

// checkReplay reads a finished handler's whole stream and checks that its
// sequence numbers are 1..last_seq and that it ends with HandlerFinished.
// It reports whether the stream holds a HandlerRestored record.
func checkReplay(ctx context.Context, c wfdv1connect.WorkflowServiceClient, id string) (restored bool, err error) {
	res, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		return false, err
	}
	last := res.GetHandler().GetLastSeq()
	s, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		return false, err
	}
	defer func() { _ = s.Close() }()
	var want uint64 = 1
	var finished bool
	for s.Receive() {
		r := s.Msg().GetRecord()
		if r == nil {
			continue
		}
		if r.GetSeq() != want {
			return false, fmt.Errorf("%s: record %d where %d was due", id, r.GetSeq(), want)
		}
		finished = r.GetHandlerFinished() != nil
		restored = restored || r.GetHandlerRestored() != nil
		want++
	}
	if err := s.Err(); err != nil {
		return false, fmt.Errorf("%s: %w", id, err)
	}
	if !finished || want-1 != last {
		return false, fmt.Errorf("%s: replayed 1..%d (ends with HandlerFinished: %v), last_seq %d", id, want-1, finished, last)
	}
	return restored, nil
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
	buildOut  []byte
)

// buildWfd builds this command once per test process, into binDir, which
// outlives every test (a test's own TempDir would vanish with the first
// test that built it).
func buildWfd(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	buildOnce.Do(func() {
		buildPath = filepath.Join(binDir, "wfd")
		buildOut, buildErr = exec.Command(goBin, "build", "-o", buildPath, ".").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return buildPath
}

// binDir holds the binary buildWfd builds; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wfd-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	code := pgtest.Main(m)
	_ = os.RemoveAll(dir) // a temporary build directory: nothing to report to
	os.Exit(code)
}

// wfdProc is a `wfd serve` child process.
type wfdProc struct {
	cmd    *exec.Cmd
	addr   string
	out    *testlog.Buffer
	exited chan struct{}
	err    error
	http   *http.Client
}

// startWfd starts `wfd serve` on data with extra flags and waits until its
// health check says SERVING.
func startWfd(t *testing.T, bin, data string, extra ...string) *wfdProc {
	t.Helper()
	return startWfdAt(t, bin, data, freeAddr(t), extra...)
}

// freeAddr returns a loopback address with a port free at the moment.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// startWfdAt is startWfd on a given address (a restart where a proxy
// expects the server).
func startWfdAt(t *testing.T, bin, data, addr string, extra ...string) *wfdProc {
	t.Helper()
	p := &wfdProc{addr: addr, out: &testlog.Buffer{}, exited: make(chan struct{})}
	// No console unless extra asks (a later flag wins): its default
	// address is one for the whole machine, maybe another suite's.
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr, "--data", data, "--console-addr", ""}, extra...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("server output:\n%s", p.out.String())
		}
	})
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	p.http = &http.Client{Transport: &http.Transport{Protocols: &protocols}}
	health := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
		p.http, "http://"+addr+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	deadline := time.Now().Add(testwait.Timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		res, err := health.CallUnary(ctx, connect.NewRequest(&healthpb.HealthCheckRequest{}))
		cancel()
		if err == nil && res.Msg.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("wfd serve exited: %v\n%s", p.err, p.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("wfd serve not healthy: %v\n%s", err, p.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *wfdProc) client() wfdv1connect.WorkflowServiceClient { return p.clientIn("") }

// clientIn is client with every call in namespace ns ("": none named).
func (p *wfdProc) clientIn(ns string) wfdv1connect.WorkflowServiceClient {
	opts := []connect.ClientOption{connect.WithGRPC()}
	if ns != "" {
		opts = append(opts, connect.WithInterceptors(namespaceHeader(ns)))
	}
	return wfdv1connect.NewWorkflowServiceClient(p.http, "http://"+p.addr, opts...)
}

// namespaceHeader names a namespace in every call (unary and streams).
type namespaceHeader string

func (n namespaceHeader) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set(namespace.Header, string(n))
		return next(ctx, req)
	}
}

func (n namespaceHeader) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set(namespace.Header, string(n))
		return conn
	}
}

func (n namespaceHeader) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// killDuring runs work on 16 goroutines and SIGKILLs the server when one
// of them calls kill (or after 5 s), while the others are mid-call. It
// returns once the process is gone and every goroutine has returned (their
// calls fail once the server is gone).
func (p *wfdProc) killDuring(t *testing.T, work func(ctx context.Context, kill func())) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	killed := make(chan struct{})
	kill := func() {
		once.Do(func() {
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			close(killed)
		})
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() { work(ctx, kill) })
	}
	select {
	case <-killed:
	case <-time.After(5 * time.Second):
		t.Log("no worker asked for the kill within 5 s; killing now")
		kill()
	}
	<-p.exited
	if p.err == nil || p.cmd.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the server did not die of SIGKILL: %v\n%s", p.err, p.out.String())
	}
	cancel()
	wg.Wait()
	p.http.CloseIdleConnections()
}

// logRecovery logs what the server said it recovered at start-up.
func (p *wfdProc) logRecovery(t *testing.T) {
	t.Helper()
	if m := recoveredRE.FindString(p.out.String()); m != "" {
		t.Logf("restarted: %s", m)
	}
}

// stop sends SIGTERM and expects a clean exit.
func (p *wfdProc) stop(t *testing.T) {
	t.Helper()
	p.http.CloseIdleConnections()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(testwait.Timeout):
		t.Fatalf("wfd serve did not stop after SIGTERM\n%s", p.out.String())
	}
	if p.err != nil {
		t.Fatalf("wfd serve exited with %v\n%s", p.err, p.out.String())
	}
}
