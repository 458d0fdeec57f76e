package server_test

import (
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// rawWorker connects to ts as a worker of def over the raw protocol and
// returns its id and a function that reads the next message that is not
// a heartbeat.
func rawWorker(t *testing.T, ts *testServer, def *wfdv1.WorkflowDefinition) (wfdv1connect.WorkerServiceClient, string, func() *wfdv1.ConnectResponse) {
	t.Helper()
	wc := wfdv1connect.NewWorkerServiceClient(ts.http, "http://"+ts.addr)
	stream, err := wc.Connect(ctxT(t), &wfdv1.ConnectRequest{Name: "raw", MaxRuns: 1, Workflows: []*wfdv1.WorkflowDefinition{def}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stream.Close() })
	next := func() *wfdv1.ConnectResponse {
		t.Helper()
		for stream.Receive() {
			if stream.Msg().GetHeartbeat() == nil {
				return stream.Msg()
			}
		}
		t.Fatalf("stream ended: %v", stream.Err())
		return nil
	}
	id := next().GetConnected().GetWorkerId()
	if id == "" {
		t.Fatal("the first message does not name the worker")
	}
	return wc, id, next
}

// localWaitFor is the first wait of a run (position 0), a WaitFor of typ.
func localWaitFor(typ string, resolved bool) *wfdv1.LocalWait {
	return &wfdv1.LocalWait{Position: 0, Resolved: resolved, Kind: &wfdv1.LocalWait_WaitFor{WaitFor: &wfdv1.WaitFor{Type: typ}}}
}

// TestWorkerProtocolLocalWaits: a worker parks a run on a wait it answers
// itself (FinishRun carries the wait): the handler is idle on it; the
// next dispatch carries the resolved event, which the worker uses without
// a StepCall, reporting the wait with its FinishRun.
func TestWorkerProtocolLocalWaits(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	def := &wfdv1.WorkflowDefinition{Name: "local-remote", Steps: []*wfdv1.StepDefinition{{Name: "s", Accepts: []string{"start"}, Emits: []string{"stop"}}}}
	wc, workerID, next := rawWorker(t, ts, def)
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "local-remote", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetHandler().GetHandlerId()
	d := next().GetDispatch()
	if !d.GetLocalWaits() || len(d.GetResolved()) != 0 {
		t.Fatalf("first dispatch %v: want local waits and nothing resolved", d)
	}
	if _, err := wc.FinishRun(ctxT(t), &wfdv1.FinishRunRequest{RunId: d.GetRunId(), WorkerId: workerID, Outcome: wfdv1.Outcome_OUTCOME_WAITING,
		LocalWaits: []*wfdv1.LocalWait{localWaitFor("go", false)},
		Written:    []*wfdv1.Event{{Type: "asked", Data: st(t, map[string]any{})}}}); err != nil {
		t.Fatal(err)
	}
	idle := waitIdle(t, c, id)
	if w := idle.GetIdle().GetWaiters(); len(w) != 1 || w[0].GetEventType() != "go" {
		t.Fatalf("idle on %v, want the wait for go", w)
	}
	if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "go", Data: st(t, map[string]any{"n": 7})}}); err != nil {
		t.Fatal(err)
	}
	d = next().GetDispatch()
	if r := d.GetResolved(); len(r) != 1 || r[0].GetPosition() != 0 || r[0].GetEvent().GetData().GetFields()["n"].GetNumberValue() != 7 {
		t.Fatalf("second dispatch resolved %v, want wait 0 with the go event", r)
	}
	if _, err := wc.FinishRun(ctxT(t), &wfdv1.FinishRunRequest{RunId: d.GetRunId(), WorkerId: workerID, Outcome: wfdv1.Outcome_OUTCOME_OK,
		LocalWaits: []*wfdv1.LocalWait{localWaitFor("go", true)},
		Sent:       []*wfdv1.Event{{Type: "stop", Data: st(t, map[string]any{"n": 7})}}}); err != nil {
		t.Fatal(err)
	}
	var asked int
	var fin *wfdv1.HandlerFinished
	for _, r := range collect(t, c, id, 0) {
		if r.GetEventWritten().GetType() == "asked" {
			asked++
		}
		if f := r.GetHandlerFinished(); f != nil {
			fin = f
		}
	}
	if asked != 1 || fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("%d asked records, finished %v", asked, fin)
	}
}

// TestWorkerProtocolLocalWaitsDisagree: a worker whose own answer to a
// wait is not the engine's (it claims wait 0 resolved when nothing is) is
// refused, and the run is dispatched again with every wait a StepCall.
func TestWorkerProtocolLocalWaitsDisagree(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	def := &wfdv1.WorkflowDefinition{Name: "liar-remote", Steps: []*wfdv1.StepDefinition{{Name: "s", Accepts: []string{"start"}, Emits: []string{"stop"}}}}
	wc, workerID, next := rawWorker(t, ts, def)
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "liar-remote", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	d := next().GetDispatch()
	_, err = wc.FinishRun(ctxT(t), &wfdv1.FinishRunRequest{RunId: d.GetRunId(), WorkerId: workerID, Outcome: wfdv1.Outcome_OUTCOME_OK,
		LocalWaits: []*wfdv1.LocalWait{localWaitFor("go", true)},
		Sent:       []*wfdv1.Event{{Type: "stop", Data: st(t, map[string]any{})}}})
	wantCode(t, err, connect.CodeFailedPrecondition, "starts over")
	d2 := next().GetDispatch()
	if d2.GetLocalWaits() || d2.GetRunId() == d.GetRunId() || d2.GetAttempt() != 1 {
		t.Fatalf("dispatch after the disagreement %v: want a new run, attempt 1, without local waits", d2)
	}
	w, err := wc.StepCall(ctxT(t), &wfdv1.StepCallRequest{RunId: d2.GetRunId(), WorkerId: workerID, Seq: 1,
		Operation: &wfdv1.StepCallRequest_WaitFor{WaitFor: &wfdv1.WaitFor{Type: "go"}}})
	if err != nil || !w.GetWaiting() {
		t.Fatalf("StepCall wait_for: %v, %v: want waiting", w, err)
	}
	if _, err := wc.FinishRun(ctxT(t), &wfdv1.FinishRunRequest{RunId: d2.GetRunId(), WorkerId: workerID, Outcome: wfdv1.Outcome_OUTCOME_WAITING}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, c, res.GetHandler().GetHandlerId())
}
