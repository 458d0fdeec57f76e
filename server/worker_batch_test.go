package server_test

import (
	"fmt"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
)

// TestWorkerProtocolFinishRuns: a worker ends several runs with one
// FinishRuns. Each run's answer is FinishRun's, in the request's order:
// the runs that are this worker's end (their handlers park on their waits), one that is
// not, or is unknown, is FailedPrecondition, and the others are not held
// back by it. A batch over the limit is refused whole.
func TestWorkerProtocolFinishRuns(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	const n = 5
	def := &wfdv1.WorkflowDefinition{Name: "batched", Steps: []*wfdv1.StepDefinition{{Name: "s", Accepts: []string{"start"}, Emits: []string{"stop"}}}}
	wc := wfdv1connect.NewWorkerServiceClient(ts.http, "http://"+ts.addr)
	stream, err := wc.Connect(ctxT(t), &wfdv1.ConnectRequest{Name: "batcher", MaxRuns: n, DispatchBatches: true, Workflows: []*wfdv1.WorkflowDefinition{def}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stream.Close() })
	var workerID string
	var dispatched []*wfdv1.Dispatch
	ids := map[string]bool{}
	for i := range n {
		res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "batched", Input: st(t, map[string]any{"i": i})})
		if err != nil {
			t.Fatal(err)
		}
		ids[res.GetHandler().GetHandlerId()] = true
	}
	// The runs come one by one or together (Dispatches), as they were
	// queued when the server wrote to the stream.
	for len(dispatched) < n && stream.Receive() {
		switch k := stream.Msg().GetKind().(type) {
		case *wfdv1.ConnectResponse_Connected:
			workerID = k.Connected.GetWorkerId()
		case *wfdv1.ConnectResponse_Dispatch:
			dispatched = append(dispatched, k.Dispatch)
		case *wfdv1.ConnectResponse_Dispatches:
			if len(k.Dispatches.GetDispatches()) < 2 {
				t.Fatalf("a Dispatches of %d runs", len(k.Dispatches.GetDispatches()))
			}
			dispatched = append(dispatched, k.Dispatches.GetDispatches()...)
		}
	}
	if len(dispatched) < n {
		t.Fatalf("stream ended after %d dispatches: %v", len(dispatched), stream.Err())
	}
	parks := func(d *wfdv1.Dispatch) *wfdv1.FinishRunRequest {
		return &wfdv1.FinishRunRequest{RunId: d.GetRunId(), WorkerId: workerID, Outcome: wfdv1.Outcome_OUTCOME_WAITING,
			LocalWaits: []*wfdv1.LocalWait{localWaitFor("approve", false)}}
	}
	req := &wfdv1.FinishRunsRequest{}
	for i, d := range dispatched {
		if !ids[d.GetHandlerId()] {
			t.Fatalf("dispatch %d is for handler %s, not one started", i, d.GetHandlerId())
		}
		req.Runs = append(req.Runs, parks(d))
		if i == 1 {
			req.Runs = append(req.Runs, &wfdv1.FinishRunRequest{RunId: "no-such-run", WorkerId: workerID, Outcome: wfdv1.Outcome_OUTCOME_OK})
			other := parks(d)
			other.WorkerId = "another-worker"
			req.Runs = append(req.Runs, other)
		}
	}
	resp, err := wc.FinishRuns(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetResults()) != len(req.GetRuns()) {
		t.Fatalf("%d results for %d runs", len(resp.GetResults()), len(req.GetRuns()))
	}
	for i, r := range resp.GetResults() {
		want := connect.Code(0)
		if i == 2 || i == 3 {
			want = connect.CodeFailedPrecondition
		}
		if connect.Code(r.GetCode()) != want || (want != 0) != (r.GetMessage() != "") {
			t.Errorf("result %d (run %s of worker %s) = %v %q, want code %v", i, req.GetRuns()[i].GetRunId(), req.GetRuns()[i].GetWorkerId(), connect.Code(r.GetCode()), r.GetMessage(), want)
		}
	}
	for id := range ids {
		if w := waitIdle(t, c, id).GetIdle().GetWaiters(); len(w) != 1 || w[0].GetEventType() != "approve" {
			t.Fatalf("handler %s idle on %v, want the wait for approve", id, w)
		}
	}
	// A run already ended is no longer this worker's.
	again, err := wc.FinishRuns(ctxT(t), &wfdv1.FinishRunsRequest{Runs: req.GetRuns()[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if r := again.GetResults(); len(r) != 1 || connect.Code(r[0].GetCode()) != connect.CodeFailedPrecondition {
		t.Fatalf("finishing an ended run again: %v, want FailedPrecondition", r)
	}
	tooMany := &wfdv1.FinishRunsRequest{}
	for i := range 1025 {
		tooMany.Runs = append(tooMany.Runs, &wfdv1.FinishRunRequest{RunId: fmt.Sprint("r", i), WorkerId: workerID})
	}
	_, err = wc.FinishRuns(ctxT(t), tooMany)
	wantCode(t, err, connect.CodeInvalidArgument, "at most 1024")
}
