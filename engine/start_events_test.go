package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wfd-dev/wfd/engine"
)

// payOnArrival ends with the data of the first "pay" event; "pay" is
// accepted from outside at any time, "late" only by a WaitFor.
func payOnArrival() engine.Workflow {
	return engine.Workflow{
		Name:     "pay",
		External: []string{"pay"},
		Steps: []engine.Step{
			{Name: "begin", Accepts: []string{engine.StartEvent}, Run: func(context.Context, *engine.StepContext, engine.Event) error { return nil }},
			{Name: "take", Accepts: []string{"pay"}, Emits: []string{engine.StopEvent},
				Run: func(_ context.Context, sc *engine.StepContext, ev engine.Event) error {
					return sc.Send(engine.StopEvent, ev.Data)
				}},
		},
	}
}

func payEvent(t *testing.T, amount float64, key string) engine.InitialEvent {
	t.Helper()
	return engine.InitialEvent{Event: engine.Event{Type: "pay", Data: mustStruct(t, map[string]any{"amount": amount})}, IdempotencyKey: key}
}

// TestStartWithEvents: the events a Start brings are in the change that
// creates the handler (a journal that fails it loses them with the
// handler), they run as events sent right after the start would, and
// their idempotency keys make a later SendEvent with the same key a
// retry.
func TestStartWithEvents(t *testing.T) {
	t.Run("one change", func(t *testing.T) {
		j := newFaultyJournal(func(c *engine.Change) verdict {
			if c.Created {
				return hold
			}
			return ack
		})
		e := faultyEngine(t, j, payOnArrival())
		done := make(chan error, 1)
		go func() {
			_, err := e.Start(context.Background(), "pay", nil, engine.StartOptions{HandlerID: "p1", Events: []engine.InitialEvent{payEvent(t, 5, "k1")}})
			done <- err
		}()
		c := j.next(t)
		st := j.snapshot(0)
		queued := 0
		for _, s := range st.GetSteps() {
			if s.GetName() == "take" {
				queued = len(s.GetQueue()) + len(s.GetInProgress())
			}
		}
		if queued != 1 || len(st.GetEventKeys()) != 1 || st.GetEventKeys()[0] != "k1" {
			t.Fatalf("the creating change holds %d queued pay events and keys %q; want 1 and [k1]", queued, st.GetEventKeys())
		}
		c.Done(errDisk)
		if err := received(t, done, "Start's answer"); !errors.Is(err, errDisk) {
			t.Fatalf("Start: %v, want %v", err, errDisk)
		}
	})

	t.Run("delivered", func(t *testing.T) {
		e, _ := newEngine(t, payOnArrival())
		h, err := e.Start(context.Background(), "pay", nil, engine.StartOptions{Events: []engine.InitialEvent{payEvent(t, 7, "k1"), payEvent(t, 9, "")}})
		if err != nil {
			t.Fatal(err)
		}
		info := wait(t, h)
		if got := info.Result.GetFields()["amount"].GetNumberValue(); info.Status != engine.StatusCompleted || got != 7 {
			t.Fatalf("handler ended %v with amount %v; want completed with the first event's 7", info.Status, got)
		}
	})

	t.Run("key remembered", func(t *testing.T) {
		wf := payOnArrival()
		wf.Steps[1].Run = func(_ context.Context, sc *engine.StepContext, ev engine.Event) error {
			n := ev.Data.GetFields()["amount"].GetNumberValue()
			if n >= 2 {
				return sc.Send(engine.StopEvent, ev.Data)
			}
			return nil
		}
		e, _ := newEngine(t, wf)
		h, err := e.Start(context.Background(), "pay", nil, engine.StartOptions{Events: []engine.InitialEvent{payEvent(t, 1, "k1")}})
		if err != nil {
			t.Fatal(err)
		}
		// A retry of the call that started it: acknowledged, not delivered
		// (amount 3 would end the handler with 3).
		if err := h.SendEvent(context.Background(), payEvent(t, 3, "k1").Event, engine.SendOptions{IdempotencyKey: "k1"}); err != nil {
			t.Fatal(err)
		}
		if err := h.SendEvent(context.Background(), payEvent(t, 2, "k2").Event, engine.SendOptions{IdempotencyKey: "k2"}); err != nil {
			t.Fatal(err)
		}
		info := wait(t, h)
		if got := info.Result.GetFields()["amount"].GetNumberValue(); info.Status != engine.StatusCompleted || got != 2 {
			t.Fatalf("handler ended %v with amount %v; want completed with 2 (the retry delivered nothing)", info.Status, got)
		}
	})
}

// TestStartWithEventsRefused: an event a SendEvent right after the start
// would be refused refuses the Start, and no handler is created.
func TestStartWithEventsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []engine.InitialEvent
		want   error
	}{
		{"no type", []engine.InitialEvent{{Event: engine.Event{}}}, engine.ErrInvalidEvent},
		{"reserved type", []engine.InitialEvent{{Event: engine.Event{Type: engine.StopEvent}}}, engine.ErrInvalidEvent},
		{"wfd type", []engine.InitialEvent{{Event: engine.Event{Type: engine.TaskEvent}}}, engine.ErrInvalidEvent},
		{"only a WaitFor takes it", []engine.InitialEvent{{Event: engine.Event{Type: "late"}}}, engine.ErrInvalidEvent},
		{"same key twice", []engine.InitialEvent{payEvent(t, 1, "k"), payEvent(t, 2, "k")}, engine.ErrInvalidEvent},
		{"too many", func() []engine.InitialEvent {
			evs := make([]engine.InitialEvent, 20)
			for i := range evs {
				evs[i] = payEvent(t, float64(i), "")
			}
			return evs
		}(), engine.ErrLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := engine.New(engine.Options{Limits: engine.Limits{MaxQueuedEvents: 10}})
			t.Cleanup(func() { _ = e.Close(context.Background()) })
			if err := e.Register(payOnArrival()); err != nil {
				t.Fatal(err)
			}
			_, err := e.Start(context.Background(), "pay", nil, engine.StartOptions{HandlerID: "r1", Events: tc.events})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Start: %v, want %v", err, tc.want)
			}
			if _, ok := e.Handler("r1"); ok {
				t.Fatal("a refused start left a handler")
			}
		})
	}
}
