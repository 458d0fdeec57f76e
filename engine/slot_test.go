package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// limited ends on its first "go" with the go's data, after its start step
// ran; at most one handler per input customer runs.
func limited() engine.Workflow {
	return engine.Workflow{
		Name:        "limited",
		External:    []string{"go"},
		Concurrency: &engine.Concurrency{Key: "customer", Max: 1},
		Steps: []engine.Step{
			{Name: "begin", Accepts: []string{engine.StartEvent}, Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				return sc.Set("began", nil)
			}},
			{Name: "finish", Accepts: []string{"go"}, Emits: []string{engine.StopEvent}, Run: func(_ context.Context, sc *engine.StepContext, ev engine.Event) error {
				return sc.Send(engine.StopEvent, ev.Data)
			}},
		},
	}
}

// TestQueuedHandler: a handler started queued runs nothing and is idle,
// waiting for its slot; the events it takes are held, across a release
// and a restore; AdmitEvent delivers them, its start first, records the
// admission, and a second admission changes nothing.
func TestQueuedHandler(t *testing.T) {
	e, rec := newEngine(t, limited())
	ctx := context.Background()
	h, err := e.Start(ctx, "limited", mustStruct(t, map[string]any{"customer": "acme"}), engine.StartOptions{HandlerID: "q", Slot: &engine.Slot{Key: "acme", Queued: true}})
	if err != nil {
		t.Fatal(err)
	}
	var info engine.Info
	testwait.For(t, "q idle", func() bool { info, _ = h.Info(ctx); return info.Idle != nil })
	if !info.Idle.Queued || info.Slot == nil || !info.Slot.Queued || info.Slot.Key != "acme" {
		t.Fatalf("queued handler: idle %+v slot %+v", info.Idle, info.Slot)
	}
	if err := h.SendEvent(ctx, engine.Event{Type: "go", Data: mustStruct(t, map[string]any{"n": 1.0})}, engine.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := h.Release(ctx)
	if err != nil {
		t.Fatalf("a queued handler is idle and can be released: %v", err)
	}
	if got := snap.GetSlot(); !got.GetQueued() || len(got.GetHeld()) != 2 || got.GetHeld()[0].GetType() != engine.StartEvent || got.GetHeld()[1].GetType() != "go" {
		t.Fatalf("released snapshot's slot: %v, want queued, holding start then go", got)
	}
	for _, s := range snap.GetSteps() {
		if len(s.GetQueue()) > 0 || len(s.GetInProgress()) > 0 {
			t.Fatalf("a queued handler has work in step %s", s.GetName())
		}
	}
	h, _, err = e.Restore(ctx, snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admit := func() error {
		return h.SendEvent(ctx, engine.Event{Type: engine.AdmitEvent}, engine.SendOptions{IdempotencyKey: "wfd.admit", FromWfd: true})
	}
	if err := admit(); err != nil {
		t.Fatal(err)
	}
	info = wait(t, h)
	if info.Status != engine.StatusCompleted || info.Result.GetFields()["n"].GetNumberValue() != 1 || info.Slot.Queued {
		t.Fatalf("after admission: %v %v slot %+v, want completed with the held go's data", info.Status, info.Result, info.Slot)
	}
	admitted := 0
	for _, r := range rec.of("q") {
		if r.Kind == engine.RecordAdmitted {
			admitted++
		}
	}
	if admitted != 1 {
		t.Fatalf("%d admission records, want 1", admitted)
	}
	// From outside, the admission is reserved.
	h2, err := e.Start(ctx, "limited", mustStruct(t, map[string]any{"customer": "b"}), engine.StartOptions{Slot: &engine.Slot{Key: "b", Queued: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h2.SendEvent(ctx, engine.Event{Type: engine.AdmitEvent}, engine.SendOptions{}); !errors.Is(err, engine.ErrInvalidEvent) {
		t.Fatalf("AdmitEvent from outside: %v, want ErrInvalidEvent", err)
	}
}

// TestConcurrencyOf: the started version gives the key, the current one
// the limit; a workflow without a limit gives none; a bad declaration is
// refused at registration.
func TestConcurrencyOf(t *testing.T) {
	e, _ := newEngine(t, limited())
	keyed, limit, err := e.ConcurrencyOf("limited", "")
	if err != nil || keyed.Key != "customer" || limit.Max != 1 {
		t.Fatalf("ConcurrencyOf = %+v, %+v, %v", keyed, limit, err)
	}
	key, err := keyed.KeyOf(mustStruct(t, map[string]any{"customer": 42.0}))
	if err != nil || key != "42" {
		t.Fatalf("KeyOf(42) = %q, %v", key, err)
	}
	if _, err := keyed.KeyOf(mustStruct(t, map[string]any{"customer": map[string]any{}})); !errors.Is(err, engine.ErrNoConcurrencyKey) {
		t.Fatalf("KeyOf(object) = %v", err)
	}
	for _, c := range []engine.Concurrency{{Max: -1}, {Rate: 1}, {Key: "x"}, {Key: "a..b", Max: 1}, {Per: 1}} {
		w := limited()
		w.Name = "bad"
		w.Concurrency = &c
		if err := e.Register(w); !errors.Is(err, engine.ErrInvalidWorkflow) {
			t.Fatalf("Register with %+v: %v, want ErrInvalidWorkflow", c, err)
		}
	}
	if _, err := e.Start(context.Background(), "limited", nil, engine.StartOptions{}); err != nil {
		t.Fatalf("a start without a slot (the host limits nothing): %v", err)
	}
}
