package replicatest_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/server"
)

// parent starts a counter child and ends once the child has.
func parent() engine.Workflow {
	return engine.Workflow{
		Name: "parent",
		Steps: []engine.Step{{
			Name: "spawn", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				child, err := sc.StartChild("counter", &structpb.Struct{})
				if err != nil {
					return err
				}
				kids, err := sc.WaitForChildren([]string{child}, 0)
				if err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
					"completed": structpb.NewNumberValue(float64(len(kids.Completed))),
				}})
			},
		}},
	}
}

// threeReplicas starts replicas a, b and c on one database, with the
// parent workflow too.
func threeReplicas(t *testing.T) (a, b, c *replica) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	start := func(id string) *replica {
		return startReplicaWith(t, url, id, 30*time.Second, false, func(o *server.Options) {
			o.Workflows = append(o.Workflows, parent())
		})
	}
	return start("a"), start("b"), start("c")
}

// moveTo releases handler id on from and wakes it on to with an inc sent
// to to (and answered there, not forwarded back to from).
func moveTo(t *testing.T, from, to *replica, id string) {
	t.Helper()
	if _, err := from.c.ReleaseHandler(context.Background(), &wfdv1.ReleaseHandlerRequest{HandlerId: id}); err != nil {
		t.Fatalf("ReleaseHandler %s on %s: %v", id, from.id, err)
	}
	// The lease is freed once the release commits, in the background.
	testwait.Until(t, func() error { return to.incHere(id) })
	if o := to.owner(t, id); o != to.id {
		t.Fatalf("owner of %s after %s woke it = %q, want %s", id, to.id, o, to.id)
	}
}

// onlyChild waits until parent, live on r, is idle waiting for one
// child, and returns the child's id.
func onlyChild(t *testing.T, r *replica, parent string) string {
	t.Helper()
	var child string
	testwait.For(t, parent+" waiting for its child", func() bool {
		h := handlerOn(t, r, parent)
		if len(h.GetChildren()) == 1 && h.GetIdle() != nil {
			child = h.GetChildren()[0]
		}
		return child != ""
	})
	return child
}

// TestReplicaFeedStreamFollowsMoves: a stream opened on C of a handler
// started on A follows it live on A, then, once A released it and an
// event sent to B woke it there, live on B, to its end: every record in
// order, without gaps or duplicates.
func TestReplicaFeedStreamFollowsMoves(t *testing.T) {
	a, b, c := threeReplicas(t)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	st, err := c.c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: "h1", IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	if !st.Receive() {
		t.Fatalf("stream on c ended before its first message: %v", st.Err())
	}
	if err := a.inc("h1"); err != nil {
		t.Fatal(err)
	}
	moveTo(t, a, b, "h1") // the second inc
	if err := b.incHere("h1"); err != nil {
		t.Fatal(err)
	}
	var (
		seqs     []uint64
		incs     int
		finished bool
	)
	for st.Receive() {
		r := st.Msg().GetRecord()
		if r == nil {
			continue // a heartbeat
		}
		seqs = append(seqs, r.GetSeq())
		if r.GetEventWritten().GetType() == "got" {
			incs++
		}
		finished = finished || r.GetHandlerFinished() != nil
	}
	if err := st.Err(); err != nil || incs != 3 || !finished {
		t.Fatalf("stream on c: %d incs, finished %v, err %v; want 3, true, nil", incs, finished, err)
	}
	h := handlerOn(t, c, "h1")
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("stream on c sent seqs %v: want 1..%d, each once, in order", seqs, h.GetLastSeq())
		}
	}
	if uint64(len(seqs)) != h.GetLastSeq() {
		t.Fatalf("stream on c sent %d records, the handler has %d", len(seqs), h.GetLastSeq())
	}
}

// TestReplicaFeedWait: a WaitHandler on C of a handler started on A
// answers once the handler, moved to B, finishes there.
func TestReplicaFeedWait(t *testing.T) {
	a, b, c := threeReplicas(t)
	ctx := context.Background()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		res *wfdv1.WaitHandlerResponse
		err error
	}
	waited := make(chan answer, 1)
	go func() {
		// The wait's own timeout is far beyond the test's: only h1's end
		// answers it in time (at its timeout it would answer h1 as stored).
		wctx, cancel := context.WithTimeout(ctx, testwait.Timeout)
		defer cancel()
		res, err := c.c.WaitHandler(wctx, &wfdv1.WaitHandlerRequest{HandlerId: "h1", Timeout: durationpb.New(time.Hour)})
		waited <- answer{res, err}
	}()
	// The wait follows h1 (wherever it is served) before anything
	// happens to it.
	testwait.For(t, "the wait", func() bool {
		var n int64
		for _, r := range []*replica{a, b, c} {
			res, err := r.c.GetStats(ctx, &wfdv1.GetStatsRequest{})
			if err != nil {
				return false
			}
			n += res.GetStreams()
		}
		return n == 1
	})
	if err := a.inc("h1"); err != nil {
		t.Fatal(err)
	}
	moveTo(t, a, b, "h1")
	if err := b.incHere("h1"); err != nil {
		t.Fatal(err)
	}
	got := <-waited
	if got.err != nil || got.res.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("WaitHandler on c = %v, %v; want the handler completed", got.res.GetHandler(), got.err)
	}
}

// TestReplicaFeedChildEnds: a parent live on A whose child, started on
// A, moved to B and ended there, hears of it at once: B cannot tell it
// (A holds it), A learns of the end through the commit feed.
func TestReplicaFeedChildEnds(t *testing.T) {
	a, b, _ := threeReplicas(t)
	ctx := context.Background()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "parent", HandlerId: "p1"}); err != nil {
		t.Fatal(err)
	}
	child := onlyChild(t, a, "p1")
	moveTo(t, a, b, child)
	if err := b.incHere(child); err != nil {
		t.Fatal(err)
	}
	// Checked before the child's end: once told of it, p1 completes and
	// frees its lease.
	if o := a.owner(t, "p1"); o != "a" {
		t.Fatalf("owner of p1 = %q, want a (it stays live there)", o)
	}
	if err := b.incHere(child); err != nil {
		t.Fatal(err)
	}
	res, err := a.c.WaitHandler(ctx, &wfdv1.WaitHandlerRequest{HandlerId: "p1", Timeout: durationpb.New(testwait.Timeout)})
	if err != nil {
		t.Fatal(err)
	}
	h := res.GetHandler()
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["completed"].GetNumberValue() != 1 {
		t.Fatalf("p1 = %v, want completed with its child completed", h)
	}
}
