package server_test

import (
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// TestWorkerDefinitionsSurviveARestart: a worker-defined workflow is
// stored, so after a restart with no worker connected its handlers are
// still there and the workflow is listed; a worker that connects again
// finishes them.
func TestWorkerDefinitionsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	wf := worker.Workflow{Definition: approvalDef("approval-stored"), Run: map[string]worker.StepFunc{"decide": decide}}
	stop := startWorker(t, ts, "w1", wf)
	workersServing(t, ts, "approval-stored", 1)
	res, err := ts.client().RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-stored", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetHandler().GetHandlerId()
	waitIdle(t, ts.client(), id)
	stop()
	ts.stop()

	ts = startServer(t, serverConfig{dir: dir})
	c := ts.client()
	list, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range list.GetWorkflows() {
		found = found || w.GetName() == "approval-stored"
	}
	if !found {
		t.Fatalf("after a restart ListWorkflows does not show approval-stored: %v", list)
	}
	waitIdle(t, c, id)
	startWorker(t, ts, "w2", wf)
	workersServing(t, ts, "approval-stored", 1)
	finishApproval(t, c, id)
}

// TestWorkerRegistrationRefused: definitions that fail validation, that
// change a registered one, or that take a built-in name are refused with
// the engine's errors, and the worker's Run ends with them.
func TestWorkerRegistrationRefused(t *testing.T) {
	ts := startServer(t, serverConfig{})
	startWorker(t, ts, "first", worker.Workflow{Definition: approvalDef("approval-taken"), Run: map[string]worker.StepFunc{"decide": decide}})
	workersServing(t, ts, "approval-taken", 1)

	noStart := approvalDef("approval-bad")
	noStart.Steps[0].Accepts = []string{"approval"}
	changed := approvalDef("approval-taken")
	changed.Steps[0].Workers = 3
	for _, tc := range []struct {
		name string
		def  engine.Workflow
		code codes.Code
		msg  string
	}{
		{"invalid", noStart, codes.InvalidArgument, `no step accepts the "start" event`},
		{"changed", changed, codes.FailedPrecondition, "registered with another definition"},
		{"built-in", approvalDef("approval"), codes.FailedPrecondition, "built into the server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.Dial(ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			w, err := worker.New(c.Conn(), worker.Options{Name: tc.name}, worker.Workflow{Definition: tc.def, Run: map[string]worker.StepFunc{"decide": decide}})
			if err != nil {
				t.Fatal(err)
			}
			err = w.Run(ctxT(t))
			if got := status.Code(err); got != tc.code || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Run: %v (%v), want %v containing %q", err, got, tc.code, tc.msg)
			}
		})
	}

	// A refused connect registers none of its workflows, valid ones neither.
	c, err := client.Dial(ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	run := map[string]worker.StepFunc{"decide": decide}
	w, err := worker.New(c.Conn(), worker.Options{Name: "mixed"},
		worker.Workflow{Definition: approvalDef("approval-partial"), Run: run}, worker.Workflow{Definition: noStart, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctxT(t)); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Run: %v, want InvalidArgument", err)
	}
	list, err := ts.client().ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, wf := range list.GetWorkflows() {
		if wf.GetName() == "approval-partial" {
			t.Fatal("a refused connect registered approval-partial")
		}
	}
}

// TestWorkerCallsForAnotherWorkersRunAreRefused: StepCall and FinishRun
// for a run that is not the caller's are FailedPrecondition.
func TestWorkerCallsForAnotherWorkersRunAreRefused(t *testing.T) {
	ts := startServer(t, serverConfig{})
	wc := wfdv1connect.NewWorkerServiceClient(ts.http, "http://"+ts.addr)
	_, err := wc.StepCall(ctxT(t), &wfdv1.StepCallRequest{RunId: "nope", WorkerId: "nobody", Operation: &wfdv1.StepCallRequest_Get{Get: "k"}})
	wantCode(t, err, connect.CodeFailedPrecondition, "not (or no longer) this worker's")
	_, err = wc.FinishRun(ctxT(t), &wfdv1.FinishRunRequest{RunId: "nope", WorkerId: "nobody", Outcome: wfdv1.Outcome_OUTCOME_OK})
	wantCode(t, err, connect.CodeFailedPrecondition, "not (or no longer) this worker's")
}
