package replicatest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
	"github.com/wfd-dev/wfd/server"
)

// limited runs at most two handlers per input customer at once; each
// waits for a "go" and ends with its data.
func limited() engine.Workflow {
	return engine.Workflow{
		Name:        "limited",
		External:    []string{"go"},
		Concurrency: &engine.Concurrency{Key: "customer", Max: 2},
		Steps: []engine.Step{
			{Name: "begin", Accepts: []string{engine.StartEvent}, Run: func(context.Context, *engine.StepContext, engine.Event) error { return nil }},
			{Name: "finish", Accepts: []string{"go"}, Emits: []string{engine.StopEvent}, Run: func(_ context.Context, sc *engine.StepContext, ev engine.Event) error {
				return sc.Send(engine.StopEvent, ev.Data)
			}},
		},
	}
}

// TestReplicaConcurrencyKey: twelve handlers of one key, started at once
// through three replicas, are never more than two running: the others
// wait, queued, and each is admitted once a running one ends, whichever
// replica it ended on and whichever holds the queued one. Every handler
// completes once, with the "go" sent to it (held while it was queued).
func TestReplicaConcurrencyKey(t *testing.T) {
	url := pgtest.NewDatabase(t)
	withLimited := func(o *server.Options) { o.Workflows = append(o.Workflows, limited()) }
	rs := []*replica{
		startReplicaWith(t, url, "a", 30*time.Second, false, withLimited),
		startReplicaWith(t, url, "b", 30*time.Second, false, withLimited),
		startReplicaWith(t, url, "c", 30*time.Second, false, withLimited),
	}
	ctx := context.Background()
	store, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	key := persistence.SlotKey{Workflow: "limited", Key: "acme"}
	const n = 12
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		ids[i] = fmt.Sprintf("l%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, _ := structpb.NewStruct(map[string]any{"customer": "acme"})
			if _, err := rs[i%3].c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "limited", HandlerId: ids[i], Input: in}); err != nil {
				t.Errorf("start %s: %v", ids[i], err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Some handlers get their "go" while still queued: it is held.
	for i, id := range ids {
		data, _ := structpb.NewStruct(map[string]any{"n": float64(i)})
		if _, err := rs[rand.IntN(3)].c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: id, IdempotencyKey: "go", Event: &wfdv1.Event{Type: "go", Data: data}}); err != nil {
			t.Fatalf("go to %s: %v", id, err)
		}
		// One read of the key: its holders, which alone may run.
		holders, _, err := store.ListSlots(ctx, key, n)
		if err != nil || len(holders) > 2 {
			t.Fatalf("the key's holders: %d, %v; the limit is 2", len(holders), err)
		}
	}
	for i, id := range ids {
		h := finishedOn(t, rs[i%3], id)
		// Nothing ran before the admission of one that waited.
		recs := stream(t, rs[0], id)
		admittedAt, ranAt := -1, -1
		for j, r := range recs {
			if r.GetHandlerAdmitted() != nil && admittedAt < 0 {
				admittedAt = j
			}
			if r.GetStepStateChanged() != nil && ranAt < 0 {
				ranAt = j
			}
		}
		if admittedAt >= 0 && ranAt < admittedAt {
			t.Fatalf("%s ran at record %d, before its admission at %d", id, ranAt, admittedAt)
		}
		if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["n"].GetNumberValue() != float64(i) {
			t.Fatalf("%s: %v %v, want completed with n %d", id, h.GetStatus(), h.GetResult(), i)
		}
		if err := finishedOnce(ctx, rs[0], id); err != nil {
			t.Fatal(err)
		}
	}
	// Every slot is given back.
	testwait.For(t, "the key emptied", func() bool {
		keys, err := store.SlotKeys(ctx, persistence.SlotKey{}, 0)
		return err == nil && len(keys) == 0
	})
}
