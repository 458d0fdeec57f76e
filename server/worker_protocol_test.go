package server_test

import (
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestWorkerProtocolRetriedStepCall drives the protocol as a worker in
// another language would (Connect's JSON-capable connect-go client, no Go
// worker package): a StepCall sent twice with the same seq is executed
// once (the same child, not two), and FinishRun ends the run.
func TestWorkerProtocolRetriedStepCall(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	def := &wfdv1.WorkflowDefinition{Name: "raw-remote", Steps: []*wfdv1.StepDefinition{{Name: "s", Accepts: []string{"start"}, Emits: []string{"stop"}}}}
	wc, workerID, next := rawWorker(t, ts, def)
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "raw-remote", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	d := next().GetDispatch()
	if d.GetHandlerId() != res.GetHandler().GetHandlerId() || d.GetStep() != "s" || d.GetInput().GetType() != "start" || d.GetAttempt() != 1 {
		t.Fatalf("dispatch %v", d)
	}
	start := &wfdv1.StepCallRequest{RunId: d.GetRunId(), WorkerId: workerID, Seq: 1,
		Operation: &wfdv1.StepCallRequest_StartChild{StartChild: &wfdv1.StartChild{Workflow: "echo", Input: st(t, map[string]any{})}}}
	var ids []string
	for range 2 {
		r, err := wc.StepCall(ctxT(t), start)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetChildId())
	}
	if ids[0] == "" || ids[0] != ids[1] {
		t.Fatalf("a retried StartChild got child ids %q: want the same one twice", ids)
	}
	if _, err := wc.FinishRun(ctxT(t), &wfdv1.FinishRunRequest{RunId: d.GetRunId(), WorkerId: workerID, Outcome: wfdv1.Outcome_OUTCOME_OK,
		Sent: []*wfdv1.Event{{Type: "stop", Data: st(t, map[string]any{"child": ids[0]})}}}); err != nil {
		t.Fatal(err)
	}
	var fin *wfdv1.HandlerFinished
	for _, r := range collect(t, c, d.GetHandlerId(), 0) {
		if f := r.GetHandlerFinished(); f != nil {
			fin = f
		}
	}
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || fin.GetResult().GetFields()["child"].GetStringValue() != ids[0] {
		t.Fatalf("finished %v", fin)
	}
	kids, err := c.ListHandlers(ctxT(t), &wfdv1.ListHandlersRequest{Workflow: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(kids.GetHandlers()); n != 1 {
		t.Fatalf("%d children, want 1", n)
	}
}

// TestWorkerProtocolStepTimeout: a run past its step's timeout is taken
// back: the worker is told (cancel_run_id), its late FinishRun is refused,
// and the attempt fails as an in-process one that times out.
func TestWorkerProtocolStepTimeout(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	def := &wfdv1.WorkflowDefinition{Name: "slow-remote", Steps: []*wfdv1.StepDefinition{{Name: "s", Accepts: []string{"start"}, Emits: []string{"stop"},
		Timeout: durationpb.New(50 * time.Millisecond)}}}
	wc, workerID, next := rawWorker(t, ts, def)
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "slow-remote", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	d := next().GetDispatch()
	if d.GetDeadline() == nil {
		t.Fatalf("dispatch of a step with a timeout has no deadline: %v", d)
	}
	if got := next().GetCancelRunId(); got != d.GetRunId() {
		t.Fatalf("after the timeout the worker got cancel %q, want %q", got, d.GetRunId())
	}
	_, err = wc.FinishRun(ctxT(t), &wfdv1.FinishRunRequest{RunId: d.GetRunId(), WorkerId: workerID, Outcome: wfdv1.Outcome_OUTCOME_OK})
	wantCode(t, err, connect.CodeFailedPrecondition, "")
	var fin *wfdv1.HandlerFinished
	for _, r := range collect(t, c, res.GetHandler().GetHandlerId(), 0) {
		if f := r.GetHandlerFinished(); f != nil {
			fin = f
		}
	}
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED {
		t.Fatalf("finished %v, want failed (the only attempt timed out)", fin)
	}
}
