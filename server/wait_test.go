package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// idleApproval starts an approval and returns it once it waits for its answer.
func idleApproval(t *testing.T, c wfdv1connect.WorkflowServiceClient) *wfdv1.Handler {
	t.Helper()
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval", Input: st(t, map[string]any{"amount": 5})})
	if err != nil {
		t.Fatal(err)
	}
	return waitIdle(t, c, res.GetHandler().GetHandlerId())
}

// untilFollowed waits until n streams or waits follow handlers.
func untilFollowed(t *testing.T, c wfdv1connect.WorkflowServiceClient, n int64) {
	t.Helper()
	testwait.Until(t, func() error {
		if got := getStats(t, c).GetStreams(); got != n {
			return fmt.Errorf("%d streams and waits follow handlers, want %d", got, n)
		}
		return nil
	})
}

type waitResult struct {
	h   *wfdv1.Handler
	err error
}

// waitAsync calls WaitHandler in the background.
func waitAsync(ctx context.Context, c wfdv1connect.WorkflowServiceClient, id string, timeout time.Duration) <-chan waitResult {
	out := make(chan waitResult, 1)
	go func() {
		res, err := c.WaitHandler(ctx, &wfdv1.WaitHandlerRequest{HandlerId: id, Timeout: durationpb.New(timeout)})
		out <- waitResult{res.GetHandler(), err}
	}()
	return out
}

// TestWaitHandlerReleasedWokenLater: a wait on a released handler does not
// load it; it answers once an event sent later (from elsewhere) wakes the
// handler and brings it to its end.
func TestWaitHandlerReleasedWokenLater(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			ts := startServer(t, serverConfig{})
			c := ts.client(p.opts...)
			h := idleApproval(t, c)
			id := h.GetHandlerId()
			if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: id}); err != nil {
				t.Fatal(err)
			}
			before := getStats(t, c).GetRehydrationsTotal()
			waited := waitAsync(ctxT(t), c, id, 50*time.Second)
			untilFollowed(t, c, 1)

			got, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
			if err != nil {
				t.Fatal(err)
			}
			if r := got.GetHandler().GetResidency(); r != wfdv1.Residency_RESIDENCY_RELEASED {
				t.Fatalf("the waited-for handler is %v, want released", r)
			}
			if n := getStats(t, c).GetRehydrationsTotal(); n != before {
				t.Fatalf("waiting loaded the handler: rehydrations %d -> %d", before, n)
			}
			select {
			case r := <-waited:
				t.Fatalf("the wait answered before the event: %v, %v", r.h, r.err)
			default:
			}

			sent := make(chan error, 1)
			go func() {
				_, err := c.SendEvent(context.Background(), &wfdv1.SendEventRequest{HandlerId: id,
					Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": true})}})
				sent <- err
			}()
			r := <-waited
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || r.h.GetResult().GetFields()["approved"].GetBoolValue() != true {
				t.Fatalf("wait answered %v, want the completed handler", r.h)
			}
			untilFollowed(t, c, 0)
		})
	}
}

// TestWaitHandlerEnds: a wait answers at once for a finished handler, with
// the running handler when its timeout passes, ends with the call's own
// deadline, and refuses what it cannot wait for.
func TestWaitHandlerEnds(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	echo, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", Input: st(t, map[string]any{"x": 1})})
	if err != nil {
		t.Fatal(err)
	}
	idle := idleApproval(t, c).GetHandlerId()

	t.Run("finished", func(t *testing.T) {
		// No timeout: the default (a minute) would fail the test's deadline
		// if the wait did not answer at once.
		res, err := c.WaitHandler(ctxT(t), &wfdv1.WaitHandlerRequest{HandlerId: echo.GetHandler().GetHandlerId()})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
			t.Fatalf("wait answered %v", res.GetHandler())
		}
	})
	t.Run("timeout", func(t *testing.T) {
		res, err := c.WaitHandler(ctxT(t), &wfdv1.WaitHandlerRequest{HandlerId: idle, Timeout: durationpb.New(100 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		if h := res.GetHandler(); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || h.GetIdle() == nil {
			t.Fatalf("wait answered %v, want the idle running handler", h)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
		defer cancel()
		_, err := c.WaitHandler(ctx, &wfdv1.WaitHandlerRequest{HandlerId: idle, Timeout: durationpb.New(time.Hour)})
		wantCode(t, err, connect.CodeDeadlineExceeded, "")
		// The server's side of the wait ends with the call.
		untilFollowed(t, c, 0)
	})
	for _, tc := range []struct {
		name string
		req  *wfdv1.WaitHandlerRequest
		code connect.Code
	}{
		{"unknown", &wfdv1.WaitHandlerRequest{HandlerId: "nope"}, connect.CodeNotFound},
		{"bad id", &wfdv1.WaitHandlerRequest{HandlerId: "a b"}, connect.CodeInvalidArgument},
		{"negative", &wfdv1.WaitHandlerRequest{HandlerId: idle, Timeout: durationpb.New(-time.Second)}, connect.CodeInvalidArgument},
		{"over an hour", &wfdv1.WaitHandlerRequest{HandlerId: idle, Timeout: durationpb.New(time.Hour + time.Second)}, connect.CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.WaitHandler(ctxT(t), tc.req)
			wantCode(t, err, tc.code, "")
		})
	}
}

// TestRunAndSendWait: RunWorkflow and SendEvent with wait answer with the
// handler once it finished; a bad wait is refused before anything is done.
func TestRunAndSendWait(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	run, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", Input: st(t, map[string]any{"x": 2}), Wait: durationpb.New(50 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if h := run.GetHandler(); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["x"].GetNumberValue() != 2 {
		t.Fatalf("RunWorkflow with wait answered %v", h)
	}

	// A handler that does not finish in time is answered running.
	short, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval", Wait: durationpb.New(50 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if short.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		t.Fatalf("RunWorkflow with a short wait answered %v", short.GetHandler())
	}

	id := idleApproval(t, c).GetHandlerId()
	sent, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Wait: durationpb.New(50 * time.Second),
		Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": false, "comment": "no"})}})
	if err != nil {
		t.Fatal(err)
	}
	if h := sent.GetHandler(); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["comment"].GetStringValue() != "no" {
		t.Fatalf("SendEvent with wait answered %v", h)
	}

	_, err = c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "never", Wait: durationpb.New(2 * time.Hour)})
	wantCode(t, err, connect.CodeInvalidArgument, "wait")
	if _, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: "never"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("a refused RunWorkflow made handler never: %v", err)
	}
	_, err = c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: short.GetHandler().GetHandlerId(), Wait: durationpb.New(-time.Second),
		Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": true})}})
	wantCode(t, err, connect.CodeInvalidArgument, "wait")
}

// TestWaitEndsOnDrain: a wait in progress when the server shuts down
// answers with the handler as it is, promptly, rather than holding the
// shutdown until its timeout.
func TestWaitEndsOnDrain(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	id := idleApproval(t, c).GetHandlerId()
	waited := waitAsync(context.Background(), c, id, time.Hour)
	untilFollowed(t, c, 1)
	stopped := make(chan struct{})
	go func() { ts.stop(); close(stopped) }()
	var r waitResult
	select {
	case r = <-waited:
	case <-time.After(testwait.Timeout):
		t.Fatal("the wait did not end with the drain")
	}
	if r.err != nil {
		t.Fatalf("wait: %v", r.err)
	}
	if r.h.GetHandlerId() != id || r.h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		t.Fatalf("wait answered %v, want the running handler", r.h)
	}
	<-stopped
}

// TestWaitHandlerUntilIdle: with until_idle a wait answers once the
// handler is idle after the record the caller names (ask, then wait for
// the next question), at once if it is idle now without one, and with
// the handler's end if it ends instead; after_seq alone is refused
// (issue 28).
func TestWaitHandlerUntilIdle(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "wi-1", Input: st(t, map[string]any{"want": 2.0})})
	if err != nil {
		t.Fatal(err)
	}
	waitIdle := func(after uint64) *wfdv1.Handler {
		t.Helper()
		w, err := c.WaitHandler(ctxT(t), &wfdv1.WaitHandlerRequest{HandlerId: "wi-1", UntilIdle: true, AfterSeq: after, Timeout: durationpb.New(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		return w.GetHandler()
	}
	h := waitIdle(res.GetHandler().GetLastSeq())
	if h.GetIdle() == nil || h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		t.Fatalf("after the start: %v", h)
	}
	// Idle now, and no after_seq: at once.
	if again := waitIdle(0); again.GetIdle() == nil || again.GetLastSeq() != h.GetLastSeq() {
		t.Fatalf("idle now: %v", again)
	}
	sent, err := sendEv(t, c, "wi-1", "inc", map[string]any{"n": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	next := waitIdle(sent.GetLastSeq())
	if next.GetIdle() == nil || next.GetLastSeq() < sent.GetLastSeq() || next.GetLastSeq() <= h.GetLastSeq() {
		t.Fatalf("after the first inc (seq %d): %v", sent.GetLastSeq(), next)
	}
	sent, err = sendEv(t, c, "wi-1", "inc", map[string]any{"n": 2.0})
	if err != nil {
		t.Fatal(err)
	}
	if end := waitIdle(sent.GetLastSeq()); end.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("after the last inc: %v, want completed", end)
	}
	_, err = c.WaitHandler(ctxT(t), &wfdv1.WaitHandlerRequest{HandlerId: "wi-1", AfterSeq: 3})
	wantCode(t, err, connect.CodeInvalidArgument, "after_seq needs until_idle")
}
