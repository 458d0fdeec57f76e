package server_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/server"
)

// wantProbe waits until GET path answers code with a body containing body.
func wantProbe(t *testing.T, addr, path string, code int, body string) {
	t.Helper()
	testwait.Until(t, func() error {
		got, b := get(t, addr, path)
		if got != code || !strings.Contains(b, body) {
			return fmt.Errorf("GET %s: %d %q, want %d %q", path, got, b, code, body)
		}
		return nil
	})
}

// TestProbes: a serving server is live and ready, over plain HTTP/1.1
// without credentials.
func TestProbes(t *testing.T) {
	ts := startServer(t, serverConfig{})
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, ts.addr, path); code != http.StatusOK || body != "ok" {
			t.Errorf("GET %s: %d %q, want 200 ok", path, code, body)
		}
	}
	res, err := http.Post("http://"+ts.addr+"/readyz", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /readyz: %s, want 405", res.Status)
	}
}

// TestReadyzDuringDrain: once the server drains (its Close runs, held up
// by a call whose commit waits), /readyz answers 503 while /healthz and
// /metrics still answer; the HTTP server is the embedder's, so it keeps
// serving through the drain.
func TestReadyzDuringDrain(t *testing.T) {
	ctx := ctxT(t)
	held := newHeldStore(t)
	store := held.store
	srv, err := server.New(ctx, server.Options{Store: store, Workflows: testWorkflows()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer()
	go func() { _ = hs.Serve(l) }()
	defer func() { _ = hs.Close() }()
	addr := l.Addr().String()
	wantProbe(t, addr, "/readyz", http.StatusOK, "ok")

	held.hold.Store(true)
	c := wfdv1connect.NewWorkflowServiceClient(h2cClient(), "http://"+addr, connect.WithGRPC())
	answered := make(chan error, 1)
	go func() {
		_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "in-flight"})
		answered <- err
	}()
	<-held.entered // the call waits for its commit: Close will wait for it
	closed := make(chan error, 1)
	go func() { closed <- srv.Close(ctx) }()

	wantProbe(t, addr, "/readyz", http.StatusServiceUnavailable, "draining")
	select {
	case err := <-closed:
		t.Fatalf("Close returned while a commit was held: %v", err)
	default:
	}
	if code, body := get(t, addr, "/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("GET /healthz during the drain: %d %q, want 200 ok", code, body)
	}

	held.hold.Store(false)
	close(held.release)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-answered; err != nil {
		t.Logf("the RunWorkflow held by the drain ended with %v", err)
	}
	wantProbe(t, addr, "/readyz", http.StatusServiceUnavailable, "draining")
	if n := value(scrape(t, addr), "wfd_rpc_requests_total", workflowService, "method=RunWorkflow"); n != 1 {
		t.Errorf("RunWorkflow counted %v times once it ended, want 1", n)
	}
}

// TestReadyzWhileStoreCannotCommit: while commits fail (a full disk),
// /readyz answers 503 and /metrics counts the failed commit and the call's
// code; once the store commits again (the health probe's commit), /readyz
// answers 200.
func TestReadyzWhileStoreCannotCommit(t *testing.T) {
	f := startFaulty(t, server.Options{Workflows: testWorkflows()})
	wantProbe(t, f.addr, "/readyz", http.StatusOK, "ok")

	failWrites(f.fs)
	_, err := f.client.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: "full"})
	wantCode(t, err, connect.CodeUnavailable, "")
	wantProbe(t, f.addr, "/readyz", http.StatusServiceUnavailable, "store cannot commit")
	if code, _ := get(t, f.addr, "/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz while the store cannot commit: %d, want 200", code)
	}
	fams := scrape(t, f.addr)
	if n := value(fams, "wfd_store_commit_errors_total"); n < 1 {
		t.Errorf("wfd_store_commit_errors_total = %v, want 1 or more", n)
	}
	if n := value(fams, "wfd_rpc_requests_total", workflowService, "method=RunWorkflow", "code=unavailable"); n != 1 {
		t.Errorf("RunWorkflow counted %v times as unavailable, want 1", n)
	}

	f.fs.Reset()
	wantProbe(t, f.addr, "/readyz", http.StatusOK, "ok")
}

// TestShutdownDelay: told to stop, a server with a shutdown delay says it
// is going (/readyz 503, gRPC health NOT_SERVING) while it still serves
// calls and keeps its streams, so load balancers can stop sending calls
// before any is refused; Close ends the delay and Serve returns.
func TestShutdownDelay(t *testing.T) {
	ts := startServer(t, serverConfig{options: func(o *server.Options) { o.ShutdownDelay = time.Hour }})
	c := ts.client()
	ctx := ctxT(t)
	run, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", Input: st(t, map[string]any{"amount": 5})})
	if err != nil {
		t.Fatal(err)
	}
	id := run.GetHandler().GetHandlerId()
	waitIdle(t, c, id)
	stream, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, FromHead: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stream.Close() }()
	if !stream.Receive() || stream.Msg().GetHeartbeat() == nil {
		t.Fatalf("first message %v, %v: want the subscription heartbeat", stream.Msg(), stream.Err())
	}

	ts.cancel() // what SIGTERM does
	wantProbe(t, ts.addr, "/readyz", http.StatusServiceUnavailable, "shutdown delay")
	wantProbe(t, ts.addr, "/healthz", http.StatusOK, "ok")
	hc := grpchealth.NewClient(ts.http, "http://"+ts.addr)
	if res, err := hc.Check(ctx, &grpchealth.CheckRequest{}); err != nil || res.Status != grpchealth.StatusNotServing {
		t.Fatalf("health Check: %v, %v; want NOT_SERVING", res, err)
	}
	// Still serving: a new handler starts, an event reaches the open stream.
	if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", Input: st(t, map[string]any{"amount": 1})}); err != nil {
		t.Fatalf("RunWorkflow during the shutdown delay: %v", err)
	}
	if _, err := c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": true})}}); err != nil {
		t.Fatalf("SendEvent during the shutdown delay: %v", err)
	}
	for stream.Receive() {
		if stream.Msg().GetRecord().GetHandlerFinished() != nil {
			break
		}
	}
	if stream.Err() != nil {
		t.Fatalf("stream during the shutdown delay: %v", stream.Err())
	}

	if err := ts.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ts.done:
		ts.done <- err // for ts.stop
	case <-ctx.Done():
		t.Fatal("Serve did not return after Close ended the shutdown delay")
	}
}
