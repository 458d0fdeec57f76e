package replicatest_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestReplicaParentLoadedHearsChild: a child ends on B while its parent is
// still A's by lease, so B cannot tell the parent, and A, cut off from the
// database, never hears of it through the commit feed (nor does C, which
// sees the parent live on A). Once A's lease has expired, C loads the
// parent for an event: loading a parent that waits on children rechecks
// them, so it hears of the child's end and completes.
func TestReplicaParentLoadedHearsChild(t *testing.T) {
	direct := pgURL(t)
	p := startProxy(t, direct)
	a := startReplicaWith(t, p.url, "a", 5*time.Second, true, withSpawner)
	b := startReplicaWith(t, direct, "b", 30*time.Second, false, withSpawner)
	c := startReplicaWith(t, direct, "c", 30*time.Second, false, withSpawner)
	ctx := context.Background()
	in, err := structpb.NewStruct(map[string]any{"workflow": "counter", "input": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "spawner", HandlerId: "p1", Input: in}); err != nil {
		t.Fatal(err)
	}
	child := onlyChild(t, a, "p1")
	moveTo(t, a, b, child)
	if err := b.incHere(child); err != nil {
		t.Fatal(err)
	}

	p.blackhole()
	// The child's last inc: it ends on b while a's lease on p1 is live
	// (5 s, renewed until just now).
	if err := b.incHere(child); err != nil {
		t.Fatal(err)
	}
	waitHandler(t, b, child, "completed", completed)

	// c answers the poke itself (marked forwarded): refused while a's
	// lease is live, then c loads p1. Loading it rechecks its child,
	// which may complete it before the poke is handled: then the poke
	// (or its retry) meets a finished handler, which is as good.
	testwait.Until(t, func() error {
		cctx, info := connect.NewClientContext(ctx)
		info.RequestHeader().Set("Wfd-Forwarded", "test")
		_, err := c.c.SendEvent(cctx, &wfdv1.SendEventRequest{HandlerId: "p1", Event: &wfdv1.Event{Type: "poke", Data: &structpb.Struct{}}})
		if connect.CodeOf(err) == connect.CodeFailedPrecondition {
			return nil
		}
		return err
	})
	h := waitHandler(t, c, "p1", "completed", completed)
	if h.GetResult().GetFields()["completed"].GetNumberValue() != 1 {
		t.Fatalf("p1 = %v, want completed with its child completed", h)
	}
	p.close() // a's shutdown fails fast instead of waiting for answers
}
