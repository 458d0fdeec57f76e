package server_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

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
// change a registered version, or that take a built-in name are refused
// with the engine's errors, and the worker's Run ends with them.
func TestWorkerRegistrationRefused(t *testing.T) {
	ts := startServer(t, serverConfig{})
	fixed := approvalDef("approval-taken")
	fixed.Version = "v1"
	startWorker(t, ts, "first", worker.Workflow{Definition: fixed, Run: map[string]worker.StepFunc{"decide": decide}})
	workersServing(t, ts, "approval-taken", 1)

	noStart := approvalDef("approval-bad")
	noStart.Steps[0].Accepts = []string{"approval"}
	// A version never changes: a changed definition is a new version.
	changed := fixed
	changed.Steps = []engine.Step{fixed.Steps[0]}
	changed.Steps[0].Workers = 3
	badVersion := approvalDef("approval-bad-version")
	badVersion.Version = "v 1"
	for _, tc := range []struct {
		name string
		def  engine.Workflow
		code codes.Code
		msg  string
	}{
		{"invalid", noStart, codes.InvalidArgument, `no step accepts the "start" event`},
		{"changed", changed, codes.AlreadyExists, `version "v1" of workflow "approval-taken" is registered with another definition; a version never changes`},
		{"bad version", badVersion, codes.InvalidArgument, `version "v 1" has ' '`},
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

// TestWorkerVersionAddedWhileHandlersRun: a changed definition registers
// as a new version while a handler of the old one runs (no refusal), and
// becomes current: new handlers run it, on the worker that serves it,
// while the running handler finishes on the old version's worker, which is
// given none of the new version's runs.
func TestWorkerVersionAddedWhileHandlersRun(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	var oldRuns atomic.Int32
	version := func(v float64, counter *atomic.Int32) worker.StepFunc {
		return func(_ context.Context, sc worker.Context, _ engine.Event) error {
			if counter != nil {
				counter.Add(1)
			}
			if _, err := sc.WaitFor("approval", engine.WaitOptions{}); err != nil {
				return err
			}
			return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"version": structpb.NewNumberValue(v)}})
		}
	}
	v1 := approvalDef("approval-swap")
	v2 := approvalDef("approval-swap")
	v2.Description = "version 2"
	startWorker(t, ts, "v1", worker.Workflow{Definition: v1, Run: map[string]worker.StepFunc{"decide": version(1, &oldRuns)}})
	workersServing(t, ts, "approval-swap", 1)
	h1, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-swap", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	id1 := h1.GetHandler().GetHandlerId()
	waitIdle(t, c, id1)

	startWorker(t, ts, "v2", worker.Workflow{Definition: v2, Run: map[string]worker.StepFunc{"decide": version(2, nil)}})
	workersServing(t, ts, "approval-swap", 2) // v1's worker is still connected
	if res := answer(t, c, id1); res.GetFields()["version"].GetNumberValue() != 1 {
		t.Fatalf("the running handler finished with %v, want version 1", res)
	}
	list, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{Name: "approval-swap"})
	if err != nil {
		t.Fatal(err)
	}
	wf := list.GetWorkflows()[0]
	if wf.GetDescription() != "version 2" || len(wf.GetVersions()) != 2 || !wf.GetVersions()[1].GetCurrent() {
		t.Fatalf("listed %v, want the new definition current among two versions", wf)
	}
	before := oldRuns.Load()
	for range 4 {
		h, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-swap", Input: st(t, map[string]any{})})
		if err != nil {
			t.Fatal(err)
		}
		waitIdle(t, c, h.GetHandler().GetHandlerId())
		if res := answer(t, c, h.GetHandler().GetHandlerId()); res.GetFields()["version"].GetNumberValue() != 2 {
			t.Fatalf("a new handler finished with %v, want version 2", res)
		}
	}
	if n := oldRuns.Load(); n != before {
		t.Fatalf("the worker with the old definition ran %d runs of the new one's handlers", n-before)
	}
}

// answer sends an approval to an idle handler and returns its result.
func answer(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) *structpb.Struct {
	t.Helper()
	if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id,
		Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": true})}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range collect(t, c, id, 0) {
		if f := r.GetHandlerFinished(); f != nil {
			if f.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
				t.Fatalf("handler %s ended %v: %s", id, f.GetStatus(), f.GetError())
			}
			return f.GetResult()
		}
	}
	t.Fatalf("handler %s: no HandlerFinished", id)
	return nil
}
