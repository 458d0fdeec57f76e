package replicatest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/server/auth"
)

// ask asks a person whether it is ok (the answer must be {"ok": bool})
// and completes with who answered.
func ask() engine.Workflow {
	schema, err := structpb.NewStruct(map[string]any{
		"type": "object", "required": []any{"ok"},
		"properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
	})
	if err != nil {
		panic(err)
	}
	return engine.Workflow{
		Name: "ask",
		Steps: []engine.Step{{
			Name: "ask", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				ans, err := sc.AskHuman(engine.Task{Title: "ok?", Schema: schema})
				if err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"by": structpb.NewStringValue(ans.CompletedBy)}})
			},
		}},
	}
}

// tallyTotal is how many numbers the concurrent senders send.
const tallyTotal = 100

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// handlerOn reads handler id through r. Unavailable is retried: it is what a replica answers while its lease
// renewal lags (a short ttl on a busy machine), and it asks for a retry.
func handlerOn(t *testing.T, r *replica, id string) *wfdv1.Handler {
	t.Helper()
	var h *wfdv1.Handler
	testwait.Until(t, func() error {
		res, err := r.c.GetHandler(context.Background(), &wfdv1.GetHandlerRequest{HandlerId: id})
		if connect.CodeOf(err) == connect.CodeUnavailable {
			return err
		}
		if err != nil {
			t.Fatalf("GetHandler %s on %s: %v", id, r.id, err)
		}
		h = res.GetHandler()
		return nil
	})
	return h
}

// finishedOn waits until handler id, as r reads it, is no longer running
// and returns it. An acknowledged SendEvent is durable, not yet handled:
// the handler may still have acknowledged events queued when the last
// sender hears back, so a test that checks the outcome waits for it.
func finishedOn(t *testing.T, r *replica, id string) *wfdv1.Handler {
	t.Helper()
	var h *wfdv1.Handler
	testwait.For(t, id+" finished", func() bool {
		h = handlerOn(t, r, id)
		st := h.GetStatus()
		return st != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING && st != wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED
	})
	return h
}

// pendingTask waits for handler id's pending task, as r lists it.
func pendingTask(ctx context.Context, t *testing.T, r *replica, id string) string {
	t.Helper()
	var task string
	testwait.For(t, "the task of "+id, func() bool {
		res, err := r.c.ListTasks(ctx, &wfdv1.ListTasksRequest{HandlerId: id, Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_PENDING}})
		if err != nil || len(res.GetTasks()) == 0 {
			return false
		}
		task = res.GetTasks()[0].GetTaskId()
		return true
	})
	return task
}

// TestReplicaForwarding: calls through B and C for handlers live on A are
// forwarded to A and answered by it (the handler stays A's, never enters
// B's or C's memory): SendEvent, CancelHandler, ReleaseHandler,
// CompleteTask (its field errors and its success), WaitHandler. A call
// already forwarded is not forwarded again: sent to a replica that lost
// the handler meanwhile, it answers Unavailable naming the new owner.
func TestReplicaForwarding(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	c := startReplica(t, url, "c", 30*time.Second)
	ctx := context.Background()
	for _, id := range []string{"h1", "h2", "h3", "h4"} {
		if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: id}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("SendEvent", func(t *testing.T) {
		// The wait is answered by A once the third inc completes h1.
		var wg sync.WaitGroup
		var waited *wfdv1.Handler
		var werr error
		wg.Go(func() {
			res, err := b.c.WaitHandler(ctx, &wfdv1.WaitHandlerRequest{HandlerId: "h1", Timeout: durationpb.New(testwait.Timeout)})
			waited, werr = res.GetHandler(), err
		})
		for i, r := range []*replica{b, c} {
			if err := r.inc("h1"); err != nil {
				t.Fatalf("inc %d through %s: %v", i, r.id, err)
			}
			if h := handlerOn(t, r, "h1"); h.GetOwner() != "a" || h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
				t.Fatalf("h1 after inc %d through %s = %v, want running on a", i, r.id, h)
			}
		}
		if n := b.inMemory(t) + c.inMemory(t); n != 0 {
			t.Fatalf("b and c have %d handlers in memory, want 0", n)
		}
		res, err := b.c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: "h1", Event: &wfdv1.Event{Type: "inc", Data: &structpb.Struct{}}})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
			t.Fatalf("third inc through b answered %v, want the completed handler", res.GetHandler())
		}
		wg.Wait()
		if werr != nil || waited.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
			t.Fatalf("WaitHandler through b = %v, %v; want completed", waited, werr)
		}
	})

	t.Run("CancelHandler", func(t *testing.T) {
		res, err := b.c.CancelHandler(ctx, &wfdv1.CancelHandlerRequest{HandlerId: "h2"})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED {
			t.Fatalf("CancelHandler through b answered %v, want cancelled", res.GetHandler())
		}
		if _, err := c.c.CancelHandler(ctx, &wfdv1.CancelHandlerRequest{HandlerId: "h2"}); connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Fatalf("second cancel through c: %v, want FailedPrecondition", err)
		}
	})

	t.Run("ReleaseHandler", func(t *testing.T) {
		testwait.For(t, "h3 idle", func() bool { return handlerOn(t, a, "h3").GetIdle() != nil })
		if _, err := b.c.ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: "h3"}); err != nil {
			t.Fatal(err)
		}
		if h := handlerOn(t, c, "h3"); h.GetResidency() != wfdv1.Residency_RESIDENCY_RELEASED {
			t.Fatalf("h3 after release through b = %v, want released", h)
		}
	})

	t.Run("NoSecondHop", func(t *testing.T) {
		// h4 moves from a to c; a call b forwarded to a before it knew is
		// refused by a, naming c, not forwarded on.
		if _, err := a.c.ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: "h4"}); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, func() error { return c.incHere("h4") })
		refusedFor(t, a.incHere("h4"), c)
		if err := a.inc("h4"); err != nil {
			t.Fatalf("inc through a, forwarded to c: %v", err)
		}
	})

	t.Run("CompleteTask", func(t *testing.T) {
		if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "ask", HandlerId: "t1"}); err != nil {
			t.Fatal(err)
		}
		task := pendingTask(ctx, t, b, "t1")
		bad, _ := structpb.NewStruct(map[string]any{"ok": "yes"})
		_, err := b.c.CompleteTask(ctx, &wfdv1.CompleteTaskRequest{TaskId: task, Answer: bad, CompletedBy: "ann"})
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "ok") {
			t.Fatalf("bad answer through b: %v, want InvalidArgument naming the field ok", err)
		}
		good, _ := structpb.NewStruct(map[string]any{"ok": true})
		res, err := b.c.CompleteTask(ctx, &wfdv1.CompleteTaskRequest{TaskId: task, Answer: good, CompletedBy: "ann"})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetTask().GetStatus() != wfdv1.TaskStatus_TASK_STATUS_COMPLETED || res.GetTask().GetCompletedBy() != "ann" {
			t.Fatalf("task after the answer through b = %v, want completed by ann", res.GetTask())
		}
		testwait.For(t, "t1 completed", func() bool {
			return handlerOn(t, c, "t1").GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
		})
	})
}

// TestReplicaForwardingIdentity: with authentication, a forwarded call is
// the caller's on the owner: an answer through B completes A's task as
// the caller (completed_by is the token's subject, not what the request
// claims); a call B does not authenticate is not forwarded.
func TestReplicaForwardingIdentity(t *testing.T) {
	url := pgtest.NewDatabase(t)
	file := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(file, []byte("tokens:\n  - token: alice-secret\n    subject: alice\n    roles: [admin]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withAuth := func(o *server.Options) {
		a, err := auth.New(context.Background(), auth.Config{TokensFile: file})
		if err != nil {
			t.Fatal(err)
		}
		o.Auth = a
	}
	a := startReplicaWith(t, url, "a", 30*time.Second, false, withAuth)
	b := startReplicaWith(t, url, "b", 30*time.Second, false, withAuth)
	as := func(token string) context.Context {
		ctx, info := connect.NewClientContext(context.Background())
		if token != "" {
			info.RequestHeader().Set("Authorization", "Bearer "+token)
		}
		return ctx
	}
	if _, err := a.c.RunWorkflow(as("alice-secret"), &wfdv1.RunWorkflowRequest{Workflow: "ask", HandlerId: "t1"}); err != nil {
		t.Fatal(err)
	}
	var task string
	testwait.For(t, "t1's task", func() bool {
		res, err := b.c.ListTasks(as("alice-secret"), &wfdv1.ListTasksRequest{HandlerId: "t1"})
		if err != nil || len(res.GetTasks()) == 0 {
			return false
		}
		task = res.GetTasks()[0].GetTaskId()
		return true
	})
	good, _ := structpb.NewStruct(map[string]any{"ok": true})
	req := &wfdv1.CompleteTaskRequest{TaskId: task, Answer: good, CompletedBy: "mallory"}
	if _, err := b.c.CompleteTask(as(""), req); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("answer through b without a token: %v, want Unauthenticated", err)
	}
	if _, err := b.c.CompleteTask(as("wrong"), req); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("answer through b with a wrong token: %v, want Unauthenticated", err)
	}
	res, err := b.c.CompleteTask(as("alice-secret"), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.GetTask().GetCompletedBy(); got != "alice" {
		t.Fatalf("completed_by = %q, want alice (the caller)", got)
	}
	// The answer is durable once acknowledged; the step it wakes runs
	// after.
	var h *wfdv1.Handler
	testwait.For(t, "t1 finished", func() bool {
		res, err := a.c.GetHandler(as("alice-secret"), &wfdv1.GetHandlerRequest{HandlerId: "t1"})
		if err != nil {
			t.Fatal(err)
		}
		h = res.GetHandler()
		return h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING
	})
	if by := h.GetResult().GetFields()["by"].GetStringValue(); by != "alice" {
		t.Fatalf("t1's result %v, want by alice", h.GetResult())
	}
}

// TestReplicaForwardingConcurrent: 100 concurrent SendEvents through B and
// C to one handler live on A are all delivered, each sender's in its
// order.
func TestReplicaForwardingConcurrent(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	c := startReplica(t, url, "c", 30*time.Second)
	ctx := context.Background()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "sequence", HandlerId: "t", Input: sequenceOf(tallyTotal)}); err != nil {
		t.Fatal(err)
	}
	const senders = 4
	errs := make(chan error, tallyTotal)
	var wg sync.WaitGroup
	for s := range senders {
		via := []*replica{b, c}[s%2]
		wg.Go(func() {
			for seq := 1; seq <= tallyTotal/senders; seq++ {
				data, _ := structpb.NewStruct(map[string]any{"sender": fmt.Sprint(s), "seq": seq})
				if _, err := via.c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: "t", Event: &wfdv1.Event{Type: "num", Data: data}}); err != nil {
					errs <- fmt.Errorf("sender %d seq %d through %s: %w", s, seq, via.id, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h := finishedOn(t, b, "t")
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("t = %v, want completed", h)
	}
	if r := h.GetResult().GetFields(); r["count"].GetNumberValue() != tallyTotal || r["unordered"].GetNumberValue() != 0 {
		t.Fatalf("t's result %v, want count %d, none unordered", h.GetResult(), tallyTotal)
	}
	if n := b.inMemory(t) + c.inMemory(t); n != 0 {
		t.Fatalf("b and c have %d handlers in memory, want 0", n)
	}
}

// keyed waits for a publication of key "go" and completes.
func keyed() engine.Workflow {
	return engine.Workflow{
		Name: "keyed",
		Steps: []engine.Step{{
			Name: "wait", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				if _, err := sc.WaitForKey("go", engine.KeyOptions{}); err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, &structpb.Struct{})
			},
		}},
	}
}

// TestReplicaForwardingPublish: a publication through B wakes the handlers
// waiting for its key wherever they are live (A, C, and B itself), and
// the log holds it once.
func TestReplicaForwardingPublish(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	c := startReplica(t, url, "c", 30*time.Second)
	ctx := context.Background()
	on := map[string]*replica{"k1": a, "k2": c, "k3": b}
	for id, r := range on {
		if _, err := r.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "keyed", HandlerId: id}); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, id+" waiting", func() bool { return handlerOn(t, r, id).GetIdle() != nil })
	}
	res, err := b.c.PublishEvent(ctx, &wfdv1.PublishEventRequest{Key: "go", Data: &structpb.Struct{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetWoken() != 3 {
		t.Fatalf("PublishEvent through b woke %d handlers, want 3", res.GetWoken())
	}
	for id := range on {
		testwait.For(t, id+" completed", func() bool {
			return handlerOn(t, b, id).GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
		})
	}
	list, err := c.c.ListPublishedEvents(ctx, &wfdv1.ListPublishedEventsRequest{Key: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.GetEvents()); n != 1 {
		t.Fatalf("%d publications of go, want 1", n)
	}
}

// TestReplicaForwardingStream: a stream opened on B of a handler live on
// A is relayed from A: it receives what A commits after it opened, up to
// the handler's end, and ends.
func TestReplicaForwardingStream(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	c := startReplica(t, url, "c", 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	st, err := b.c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	// Once its first message arrived the stream is open, and the incs
	// below commit after it.
	if !st.Receive() {
		t.Fatalf("stream through b ended before its first message: %v", st.Err())
	}
	for range 3 {
		if err := c.inc("h1"); err != nil {
			t.Fatal(err)
		}
	}
	var incs int
	var finished bool
	for st.Receive() {
		r := st.Msg().GetRecord()
		if r.GetEventWritten().GetType() == "got" { // written by each inc
			incs++
		}
		if r.GetHandlerFinished() != nil {
			finished = true
		}
	}
	if err := st.Err(); err != nil || incs != 3 || !finished {
		t.Fatalf("stream through b: %d incs, finished %v, err %v; want 3, true, nil", incs, finished, err)
	}
}
