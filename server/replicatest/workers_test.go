package replicatest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// reviewDef is a workflow only workers define: one step that writes
// where it ran, waits for an "approval" and completes with the decision
// and where it ran.
func reviewDef() engine.Workflow {
	return engine.Workflow{
		Name:   "review",
		Events: []engine.EventType{{Type: "approval", Description: "the decision"}},
		Steps:  []engine.Step{{Name: "decide", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}},
	}
}

// review is reviewDef's step as run by the worker labelled by. The
// input's timeout_ms bounds the wait (an hour without it); a wait that
// times out completes unapproved.
func review(by string) worker.StepFunc {
	return func(_ context.Context, sc worker.Context, in engine.Event) error {
		sc.Write("ran", &structpb.Struct{Fields: map[string]*structpb.Value{"by": structpb.NewStringValue(by)}})
		timeout := time.Hour
		if ms := in.Data.GetFields()["timeout_ms"]; ms != nil {
			timeout = time.Duration(ms.GetNumberValue()) * time.Millisecond
		}
		ev, err := sc.WaitFor("approval", engine.WaitOptions{Timeout: timeout})
		if errors.Is(err, engine.ErrTimeout) {
			return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
				"approved": structpb.NewBoolValue(false), "by": structpb.NewStringValue(by)}})
		}
		if err != nil {
			return err
		}
		return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
			"approved": structpb.NewBoolValue(ev.Data.GetFields()["approved"].GetBoolValue()),
			"by":       structpb.NewStringValue(by),
		}})
	}
}

// startWorker runs a Go worker of reviewDef connected to r alone until
// the returned stop (or the test's end), once r lists it: from then on
// the other replicas know where it is.
func startWorker(t *testing.T, r *replica, name string, step worker.StepFunc) (stop func()) {
	t.Helper()
	return startWorkerDef(t, r, name, reviewDef(), step)
}

// workersOn waits until r lists the worker named name (listed), or no
// longer lists it.
func workersOn(t *testing.T, r *replica, name string, listed bool) {
	t.Helper()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: &p}}
	defer hc.CloseIdleConnections()
	wc := wfdv1connect.NewWorkerServiceClient(hc, "http://"+r.addr)
	testwait.Until(t, func() error {
		res, err := wc.ListWorkers(context.Background(), &wfdv1.ListWorkersRequest{})
		if err != nil {
			return err
		}
		found := false
		for _, w := range res.GetWorkers() {
			found = found || w.GetName() == name
		}
		if found != listed {
			return fmt.Errorf("replica %s lists worker %s: %v, want %v", r.id, name, found, listed)
		}
		return nil
	})
}

// waitHandler waits until GetHandler through r satisfies ok, and returns it.
func waitHandler(t *testing.T, r *replica, id, what string, ok func(*wfdv1.Handler) bool) *wfdv1.Handler {
	t.Helper()
	var h *wfdv1.Handler
	testwait.Until(t, func() error {
		res, err := r.c.GetHandler(context.Background(), &wfdv1.GetHandlerRequest{HandlerId: id})
		if err != nil {
			return err
		}
		if h = res.GetHandler(); !ok(h) {
			return fmt.Errorf("handler %s through %s: not yet %s: %v", id, r.id, what, h)
		}
		return nil
	})
	return h
}

func idleOn(owner string) func(*wfdv1.Handler) bool {
	return func(h *wfdv1.Handler) bool { return h.GetIdle() != nil && h.GetOwner() == owner }
}

func completed(h *wfdv1.Handler) bool {
	return h.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
}

// approve sends the approval through r and waits for the handler to
// complete, and checks the step that completed it ran on the worker by.
func approve(t *testing.T, r *replica, id string) {
	const by = "b" // the worker every test here has approve
	t.Helper()
	if _, err := r.c.SendEvent(context.Background(), &wfdv1.SendEventRequest{HandlerId: id,
		Event: &wfdv1.Event{Type: "approval", Data: &structpb.Struct{Fields: map[string]*structpb.Value{"approved": structpb.NewBoolValue(true)}}}}); err != nil {
		t.Fatalf("SendEvent through %s: %v", r.id, err)
	}
	h := waitHandler(t, r, id, "completed", completed)
	if got := h.GetResult().GetFields()["by"].GetStringValue(); got != by || !h.GetResult().GetFields()["approved"].GetBoolValue() {
		t.Fatalf("result %v, want approved by worker %s", h.GetResult(), by)
	}
}

// TestWorkerOnOtherReplicaServesStart: a workflow defined by a worker
// connected only to B (A started before the definition existed) is
// started through A: the start goes to B, where the worker runs it; an
// event through C reaches it there; A and C never hold it.
func TestWorkerOnOtherReplicaServesStart(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	c := startReplica(t, url, "c", 30*time.Second)
	startWorker(t, b, "on-b", review("b"))

	res, err := a.c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{Workflow: "review", Input: &structpb.Struct{}})
	if err != nil {
		t.Fatalf("RunWorkflow through a: %v", err)
	}
	id := res.GetHandler().GetHandlerId()
	if got := res.GetHandler().GetOwner(); got != b.id {
		t.Fatalf("RunWorkflow through a: owner %q, want %q (the replica with the worker)", got, b.id)
	}
	waitHandler(t, c, id, "idle on b", idleOn(b.id))
	approve(t, c, id)
	if n := a.inMemory(t) + c.inMemory(t); n != 0 {
		t.Fatalf("a and c hold %d handlers in memory, want none", n)
	}
	// A named handler started through c, the same way; a repeat through
	// a answers the same handler.
	for _, r := range []*replica{c, a} {
		res, err := r.c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{Workflow: "review", HandlerId: "named", Input: &structpb.Struct{}})
		if err != nil || res.GetHandler().GetHandlerId() != "named" {
			t.Fatalf("RunWorkflow named through %s: %v, %v", r.id, res, err)
		}
	}
	waitHandler(t, a, "named", "idle on b", idleOn(b.id))
}

// TestWorkerGoneHandlerMovesToReplicaWithWorkers: a handler of a
// worker-defined workflow live on A, whose only worker on A goes in the
// middle of a run while another worker of the workflow is connected to
// B, is handed over: B loads it, its run runs again on B's worker, and
// events sent through C reach it there until it completes.
func TestWorkerGoneHandlerMovesToReplicaWithWorkers(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	c := startReplica(t, url, "c", 30*time.Second)
	started := make(chan struct{})
	var startedOnce sync.Once
	stuck := func(ctx context.Context, sc worker.Context, _ engine.Event) error {
		sc.Write("ran", &structpb.Struct{Fields: map[string]*structpb.Value{"by": structpb.NewStringValue("a")}})
		startedOnce.Do(func() { close(started) })
		<-ctx.Done()
		return errors.New("the worker stopped")
	}
	stopA := startWorker(t, a, "on-a", stuck)

	res, err := a.c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{Workflow: "review", Input: &structpb.Struct{}})
	if err != nil {
		t.Fatalf("RunWorkflow through a: %v", err)
	}
	id := res.GetHandler().GetHandlerId()
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("a's worker never got the run")
	}
	startWorker(t, b, "on-b", review("b"))
	// A's worker still has the run: the handler stays on a.
	if got := c.owner(t, id); got != a.id {
		t.Fatalf("owner while a's worker runs it: %q, want %q", got, a.id)
	}

	stopA()
	workersOn(t, a, "on-a", false)
	waitHandler(t, c, id, "idle on b", idleOn(b.id))
	if n := a.inMemory(t); n != 0 {
		t.Fatalf("a holds %d handlers in memory after handing it over, want none", n)
	}
	approve(t, c, id)
	// The stream, read through a, shows no failed run: the lost one is
	// not an attempt.
	for _, rec := range stream(t, a, id) {
		if e := rec.GetStepStateChanged().GetError(); e != "" {
			t.Fatalf("a run failed: %v", rec)
		}
	}
}

// TestWorkerReleasedHandlerWokenElsewhere: a released handler of a
// workflow whose only worker is on B is woken on B, whichever replica
// gets its event (C, which has never seen the workflow) or finds its timer
// due: it is never restored where its workflow is unknown (which would
// fail it) nor where no worker serves it.
func TestWorkerReleasedHandlerWokenElsewhere(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	c := startReplica(t, url, "c", 30*time.Second)
	startWorker(t, b, "on-b", review("b"))
	released := func(h *wfdv1.Handler) bool {
		return h.GetResidency() == wfdv1.Residency_RESIDENCY_RELEASED && h.GetOwner() == ""
	}
	// start runs a review through b and releases it once idle on b. ok is
	// false when the handler finished before it could be released (its
	// timer, given by input, fired first on a slow machine).
	start := func(input map[string]any) (id string, ok bool) {
		t.Helper()
		in, err := structpb.NewStruct(input)
		if err != nil {
			t.Fatal(err)
		}
		res, err := b.c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{Workflow: "review", Input: in})
		if err != nil {
			t.Fatalf("RunWorkflow through b: %v", err)
		}
		id = res.GetHandler().GetHandlerId()
		h := waitHandler(t, b, id, "idle on b or finished", func(h *wfdv1.Handler) bool {
			return idleOn(b.id)(h) || h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING
		})
		if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
			return id, false
		}
		if _, err := b.c.ReleaseHandler(context.Background(), &wfdv1.ReleaseHandlerRequest{HandlerId: id}); err != nil {
			if finished := handlerOn(t, b, id).GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING; finished {
				return id, false
			}
			t.Fatalf("ReleaseHandler: %v", err)
		}
		waitHandler(t, c, id, "released", released)
		return id, true
	}

	byEvent, ok := start(map[string]any{})
	if !ok {
		t.Fatalf("%s finished without an answer", byEvent)
	}
	approve(t, c, byEvent)

	// The timer must not fire before the release: a slow machine gets a
	// longer one.
	var byTimer string
	for ms := 300; ; ms *= 2 {
		if byTimer, ok = start(map[string]any{"timeout_ms": ms}); ok {
			break
		}
		t.Logf("%s's %d ms timer fired before its release; again with %d ms", byTimer, ms, 2*ms)
	}
	h := waitHandler(t, a, byTimer, "finished", func(h *wfdv1.Handler) bool { return h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING })
	if !completed(h) || h.GetResult().GetFields()["by"].GetStringValue() != "b" || h.GetResult().GetFields()["approved"].GetBoolValue() {
		t.Fatalf("after its timer: %v, want completed unapproved by b", h)
	}
	if n := a.inMemory(t) + c.inMemory(t); n != 0 {
		t.Fatalf("a and c hold %d handlers in memory, want none", n)
	}
}

// TestWorkerReplicaStoppedRunGoesOn: a replica that shuts down with a
// run of a worker-defined workflow in progress on its worker leaves the run
// in progress in the checkpoint; the replica where another worker of the
// workflow is connected loads the handler and the run runs there, without
// a call or a restart of the first.
func TestWorkerReplicaStoppedRunGoesOn(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	started := make(chan struct{})
	var startedOnce sync.Once
	stuck := func(ctx context.Context, _ worker.Context, _ engine.Event) error {
		startedOnce.Do(func() { close(started) })
		<-ctx.Done()
		return errors.New("the worker stopped")
	}
	startWorker(t, a, "on-a", stuck)
	res, err := a.c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{Workflow: "review", Input: &structpb.Struct{}})
	if err != nil {
		t.Fatalf("RunWorkflow through a: %v", err)
	}
	id := res.GetHandler().GetHandlerId()
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("a's worker never got the run")
	}
	startWorker(t, b, "on-b", review("b"))
	a.stop()
	waitHandler(t, b, id, "idle on b", idleOn(b.id))
	approve(t, b, id)
}

// stream reads handler id's whole stream (it has ended) through r.
func stream(t *testing.T, r *replica, id string) []*wfdv1.Record {
	t.Helper()
	s, err := r.c.StreamEvents(context.Background(), &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var out []*wfdv1.Record
	for s.Receive() {
		if rec := s.Msg().GetRecord(); rec != nil {
			out = append(out, rec)
		}
	}
	if err := s.Err(); err != nil && connect.CodeOf(err) != connect.CodeCanceled {
		t.Fatalf("stream through %s: %v", r.id, err)
	}
	return out
}
