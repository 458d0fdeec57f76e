package server_test

import (
	"context"
	"sync"
	"testing"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// TestWorkerShutdownWithARunInProgress: a server that stops while a worker
// executes a run stops cleanly, without waiting out the grace period for
// a run that cannot finish (the worker's calls cannot reach a server that
// is shutting down): the run stays in progress (engine.ErrInterrupted) and
// runs again after the restart, on a worker that connects then.
func TestWorkerShutdownWithARunInProgress(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	started := make(chan struct{})
	var once sync.Once
	stuck := func(ctx context.Context, _ worker.Context, _ engine.Event) error {
		once.Do(func() { close(started) })
		<-ctx.Done()
		return ctx.Err()
	}
	stop := startWorker(t, ts, "a", worker.Workflow{Definition: approvalDef("approval-cut"), Run: map[string]worker.StepFunc{"decide": stuck}})
	workersServing(t, ts, "approval-cut", 1)
	res, err := ts.client().RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-cut", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-ctxT(t).Done():
		t.Fatal("the worker never got the run")
	}
	ts.stop() // fails the test if Serve reports the grace period passed
	stop()

	ts = startServer(t, serverConfig{dir: dir})
	startWorker(t, ts, "b", worker.Workflow{Definition: approvalDef("approval-cut"), Run: map[string]worker.StepFunc{"decide": decide}})
	finishApproval(t, ts.client(), res.GetHandler().GetHandlerId())
}
