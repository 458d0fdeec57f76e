package server_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// approvalDef is a workflow only a worker defines: one step that writes
// progress, waits for an "approval" event with a deadline and completes
// with the decision.
func approvalDef(name string) engine.Workflow {
	return engine.Workflow{
		Name:   name,
		Events: []engine.EventType{{Type: "approval", Description: "the decision"}},
		Steps:  []engine.Step{{Name: "decide", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}},
	}
}

// decide is approvalDef's step.
func decide(_ context.Context, sc worker.Context, in engine.Event) error {
	sc.Write("progress", &structpb.Struct{Fields: map[string]*structpb.Value{"stage": structpb.NewStringValue("asked")}})
	ev, err := sc.WaitFor("approval", engine.WaitOptions{Timeout: time.Hour})
	if err != nil {
		return err
	}
	return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
		"approved": structpb.NewBoolValue(ev.Data.GetFields()["approved"].GetBoolValue())}})
}

// startWorker runs a Go worker against ts until stop is called (or the
// test ends), and returns stop, which waits for the worker to end.
func startWorker(t *testing.T, ts *testServer, name string, wf worker.Workflow) (stop func()) {
	t.Helper()
	return startWorkerN(t, ts, name, 4, wf)
}

// startWorkerN is startWorker with a worker that takes maxRuns runs at once.
func startWorkerN(t *testing.T, ts *testServer, name string, maxRuns int, wf worker.Workflow) (stop func()) {
	t.Helper()
	return startWorkerDial(t, ts, name, maxRuns, wf)
}

// startWorkerDial is startWorkerN with a worker whose client is dialed
// with opts (a namespace, say).
func startWorkerDial(t *testing.T, ts *testServer, name string, maxRuns int, wf worker.Workflow, opts ...client.Option) (stop func()) {
	t.Helper()
	c, err := client.Dial(ts.addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(c.Conn(), worker.Options{Name: name, MaxRuns: maxRuns}, wf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker %s: %v", name, err)
			}
			_ = c.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

// workersServing waits until n connected workers serve workflow; opts
// are the ListWorkers client's (credentials, say).
func workersServing(t *testing.T, ts *testServer, workflow string, n int, opts ...connect.ClientOption) {
	t.Helper()
	wc := wfdv1connect.NewWorkerServiceClient(ts.http, "http://"+ts.addr, opts...)
	testwait.Until(t, func() error {
		res, err := wc.ListWorkers(ctxT(t), &wfdv1.ListWorkersRequest{})
		if err != nil {
			return err
		}
		got := 0
		for _, w := range res.GetWorkers() {
			for _, name := range w.GetWorkflows() {
				if name == workflow {
					got++
				}
			}
		}
		if got != n {
			return fmt.Errorf("%d workers serve %s, want %d", got, workflow, n)
		}
		return nil
	})
}

// finishApproval answers the handler's wait and checks that it completes
// with the decision, having written progress once.
func finishApproval(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) {
	t.Helper()
	waitIdle(t, c, id)
	if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id,
		Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": true})}}); err != nil {
		t.Fatal(err)
	}
	recs := collect(t, c, id, 0)
	progress := 0
	var fin *wfdv1.HandlerFinished
	for _, r := range recs {
		if r.GetEventWritten().GetType() == "progress" {
			progress++
		}
		if f := r.GetHandlerFinished(); f != nil {
			fin = f
		}
	}
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || !fin.GetResult().GetFields()["approved"].GetBoolValue() {
		t.Fatalf("handler finished %v, want completed with approved: true; records %v", fin, recs)
	}
	// The wait parks the run once and re-runs it once: each run writes.
	if progress != 2 {
		t.Fatalf("%d progress records, want 2 (the parked run's and the re-run's): %v", progress, recs)
	}
}

// TestWorkerRunsAWorkflowItDefines: a workflow defined only by a Go worker
// is listed, starts, parks on its wait (idle), and completes when the
// event arrives, with its stream as for an in-process workflow.
func TestWorkerRunsAWorkflowItDefines(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	startWorker(t, ts, "w1", worker.Workflow{Definition: approvalDef("approval-remote"), Run: map[string]worker.StepFunc{"decide": decide}})
	workersServing(t, ts, "approval-remote", 1)

	list, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range list.GetWorkflows() {
		switch w.GetName() {
		case "approval-remote":
			found = w.GetServedByWorkers() && w.GetWorkersConnected() == 1
		case "approval":
			if w.GetServedByWorkers() || w.GetWorkersConnected() != 0 {
				t.Errorf("built-in approval listed as served by workers: %v", w)
			}
		}
	}
	if !found {
		t.Fatalf("ListWorkflows does not show approval-remote served by 1 worker: %v", list)
	}
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-remote", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	finishApproval(t, c, res.GetHandler().GetHandlerId())
}

// TestWorkerLostMidRunIsReplaced: a worker that disconnects in the middle
// of a step has the run dispatched to another, which finishes it; the lost
// run's writes are not kept.
func TestWorkerLostMidRunIsReplaced(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	started := make(chan struct{})
	var startedOnce sync.Once
	stuck := func(ctx context.Context, sc worker.Context, _ engine.Event) error {
		sc.Write("lost", nil)
		// A StepCall that parks, then the worker goes before finishing.
		if _, err := sc.WaitFor("approval", engine.WaitOptions{}); !errors.Is(err, engine.ErrWaiting) {
			return fmt.Errorf("WaitFor: %w, want ErrWaiting", err)
		}
		startedOnce.Do(func() { close(started) })
		<-ctx.Done()
		return errors.New("the worker stopped")
	}
	stopA := startWorker(t, ts, "a", worker.Workflow{Definition: approvalDef("approval-lost"), Run: map[string]worker.StepFunc{"decide": stuck}})
	workersServing(t, ts, "approval-lost", 1)
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-lost", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetHandler().GetHandlerId()
	select {
	case <-started:
	case <-ctxT(t).Done():
		t.Fatal("the first worker never got the run")
	}
	stopA()
	startWorker(t, ts, "b", worker.Workflow{Definition: approvalDef("approval-lost"), Run: map[string]worker.StepFunc{"decide": decide}})
	finishApproval(t, c, id)
	for _, r := range collect(t, c, id, 0) {
		if r.GetEventWritten().GetType() == "lost" {
			t.Fatalf("the lost run's write is on the stream: %v", r)
		}
		if e := r.GetStepStateChanged().GetError(); e != "" {
			t.Fatalf("a run failed (a lost worker must not count as a failed attempt): %v", r)
		}
	}
	stats, err := c.GetStats(ctxT(t), &wfdv1.GetStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// The first dispatch, the redispatch, and the re-run after the wait.
	if stats.GetRedispatchesTotal() != 1 || stats.GetDispatchesTotal() != 3 || stats.GetWorkersConnected() != 1 {
		t.Fatalf("stats: %d redispatches, %d dispatches, %d workers; want 1, 3, 1", stats.GetRedispatchesTotal(), stats.GetDispatchesTotal(), stats.GetWorkersConnected())
	}
}
