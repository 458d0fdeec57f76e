package replicatest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/server"
)

// spawner starts a child of the workflow its input names, with the
// input's "input", and completes with the child's result once it has
// ended. A "poke" does nothing (an event that loads it).
func spawner() engine.Workflow {
	return engine.Workflow{
		Name:     "spawner",
		External: []string{"poke"},
		Steps: []engine.Step{
			{Name: "spawn", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
				Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
					f := in.Data.GetFields()
					child, err := sc.StartChild(f["workflow"].GetStringValue(), f["input"].GetStructValue())
					if err != nil {
						return err
					}
					kids, err := sc.WaitForChildren([]string{child}, 0)
					if err != nil {
						return err
					}
					res := kids.Results[child].Result
					if res == nil {
						res = &structpb.Struct{}
					}
					return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
						"completed": structpb.NewNumberValue(float64(len(kids.Completed))),
						"result":    structpb.NewStructValue(res),
					}})
				}},
			{Name: "poked", Accepts: []string{"poke"}, Run: func(context.Context, *engine.StepContext, engine.Event) error { return nil }},
		},
	}
}

// withSpawner registers spawner too.
func withSpawner(o *server.Options) { o.Workflows = append(o.Workflows, spawner()) }

// startWorkerDef runs a Go worker of def (its one step "decide" run by
// step) connected to r alone until the returned stop (or the test's end),
// once r lists it.
func startWorkerDef(t *testing.T, r *replica, name string, def engine.Workflow, step worker.StepFunc) (stop func()) {
	t.Helper()
	c, err := client.Dial(r.addr)
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(c.Conn(), worker.Options{Name: name, MaxRuns: 4},
		worker.Workflow{Definition: def, Run: map[string]worker.StepFunc{"decide": step}})
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
	workersOn(t, r, name, true)
	return stop
}

// timedOutReview is the input of a review that completes unapproved
// after 200 ms, by itself.
func timedOutReview() *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{"timeout_ms": structpb.NewNumberValue(200)}}
}

// runReview starts a review that completes by itself through r, waits
// for its end and returns the worker that ran it.
func runReview(t *testing.T, r *replica) string {
	t.Helper()
	res, err := r.c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{Workflow: "review", Input: timedOutReview()})
	if err != nil {
		t.Fatalf("RunWorkflow review through %s: %v", r.id, err)
	}
	h := waitHandler(t, r, res.GetHandler().GetHandlerId(), "completed", completed)
	return h.GetResult().GetFields()["by"].GetStringValue()
}

// TestDefsChildDefinedOnOtherReplica: a parent started through A whose
// child's workflow only a worker on B defines (A never saw it) starts the
// child, which runs on B's worker, and completes with its result.
func TestDefsChildDefinedOnOtherReplica(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplicaWith(t, url, "a", 30*time.Second, false, withSpawner)
	b := startReplicaWith(t, url, "b", 30*time.Second, false, withSpawner)
	c := startReplicaWith(t, url, "c", 30*time.Second, false, withSpawner)
	startWorker(t, b, "on-b", review("b"))

	in, err := structpb.NewStruct(map[string]any{"workflow": "review", "input": map[string]any{"timeout_ms": 200}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{Workflow: "spawner", HandlerId: "p1", Input: in}); err != nil {
		t.Fatalf("RunWorkflow spawner through a: %v", err)
	}
	h := waitHandler(t, c, "p1", "finished", func(h *wfdv1.Handler) bool {
		return h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING
	})
	if !completed(h) || h.GetResult().GetFields()["completed"].GetNumberValue() != 1 ||
		h.GetResult().GetFields()["result"].GetStructValue().GetFields()["by"].GetStringValue() != "b" {
		t.Fatalf("p1 = %v, want completed with its child completed by b's worker", h)
	}
}

// TestDefsListedOnEveryReplica: a workflow a worker registered on A is
// listed by C (started before it existed, never asked to run it), as
// served by workers.
func TestDefsListedOnEveryReplica(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	c := startReplica(t, url, "c", 30*time.Second)
	startWorker(t, a, "on-a", review("a"))

	res, err := c.c.ListWorkflows(context.Background(), &wfdv1.ListWorkflowsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range res.GetWorkflows() {
		names = append(names, w.GetName())
		if w.GetName() == "review" {
			if !w.GetServedByWorkers() || len(w.GetSteps()) != 1 || w.GetSteps()[0] != "decide" {
				t.Fatalf("review as c lists it: %v, want served by workers, step decide", w)
			}
			return
		}
	}
	t.Fatalf("c lists %v, want review too", names)
}

// TestDefsVersionOnOneReplica: a version registered through one replica
// is served and routed by all. B knows review@v1 as a worker on A first
// defined it; a handler of it parks (on A, with its worker). Then a worker
// on C registers review@v2, which becomes current: B's next start runs on
// C's worker (routed by version), while the v1 handler, answered through
// B, finishes on A's v1 worker. B lists both versions, v2 current. An
// upgrade through B of a v1 handler held by A is made on A (forwarded),
// and the handler then finishes on C's v2 worker.
func TestDefsVersionOnOneReplica(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	c := startReplica(t, url, "c", 30*time.Second)
	v1 := reviewDef()
	v1.Version = "v1"
	stopV1 := startWorkerDef(t, a, "v1", v1, review("a-v1"))
	if by := runReview(t, b); by != "a-v1" {
		t.Fatalf("review through b ran on %q, want a-v1", by)
	}
	parked := make([]string, 2)
	for i := range parked {
		res, err := b.c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{Workflow: "review", Input: &structpb.Struct{}})
		if err != nil {
			t.Fatal(err)
		}
		parked[i] = res.GetHandler().GetHandlerId()
		waitHandler(t, b, parked[i], "idle", func(h *wfdv1.Handler) bool { return h.GetIdle() != nil })
	}

	v2 := reviewDef()
	v2.Version = "v2"
	v2.Description = "the second version"
	startWorkerDef(t, c, "v2", v2, review("c-v2"))
	testwait.Until(t, func() error {
		res, err := b.c.ListWorkflows(context.Background(), &wfdv1.ListWorkflowsRequest{Name: "review"})
		if err != nil {
			return err
		}
		w := res.GetWorkflows()[0]
		if w.GetVersion() != "v2" || len(w.GetVersions()) != 2 || w.GetVersions()[0].GetVersion() != "v1" {
			return fmt.Errorf("b lists review %v, want versions v1 and v2, v2 current", w)
		}
		return nil
	})
	if by := runReview(t, b); by != "c-v2" {
		t.Fatalf("a new review through b ran on %q, want c-v2", by)
	}
	if by := answerReview(t, b, parked[0]); by != "a-v1" {
		t.Fatalf("the parked v1 review finished on %q, want a-v1", by)
	}

	res, err := b.c.UpgradeHandlers(context.Background(), &wfdv1.UpgradeHandlersRequest{Workflow: "review", FromVersion: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if hs := res.GetHandlers(); len(hs) != 1 || hs[0].GetHandlerId() != parked[1] || hs[0].GetOutcome() != wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_MOVED {
		t.Fatalf("UpgradeHandlers through b: %v, want %s moved", hs, parked[1])
	}
	if by := answerReview(t, b, parked[1]); by != "c-v2" {
		t.Fatalf("the upgraded review finished on %q, want c-v2", by)
	}

	// v1, once no worker serves it, deleted through C is gone from every
	// replica's list.
	stopV1()
	workersOn(t, a, "v1", false)
	if _, err := c.c.DeleteWorkflowVersion(context.Background(), &wfdv1.DeleteWorkflowVersionRequest{Workflow: "review", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*replica{a, b} {
		res, err := r.c.ListWorkflows(context.Background(), &wfdv1.ListWorkflowsRequest{Name: "review"})
		if err != nil {
			t.Fatal(err)
		}
		if vs := res.GetWorkflows()[0].GetVersions(); len(vs) != 1 || vs[0].GetVersion() != "v2" {
			t.Fatalf("%s lists versions %v after v1 was deleted through c, want v2 alone", r.id, vs)
		}
	}
}

// answerReview approves a parked review through r and returns the worker
// that finished it.
func answerReview(t *testing.T, r *replica, id string) string {
	t.Helper()
	if _, err := r.c.SendEvent(context.Background(), &wfdv1.SendEventRequest{HandlerId: id,
		Event: &wfdv1.Event{Type: "approval", Data: &structpb.Struct{Fields: map[string]*structpb.Value{"approved": structpb.NewBoolValue(true)}}}}); err != nil {
		t.Fatalf("SendEvent through %s: %v", r.id, err)
	}
	h := waitHandler(t, r, id, "completed", completed)
	return h.GetResult().GetFields()["by"].GetStringValue()
}
