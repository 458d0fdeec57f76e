package engine_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// TestIdleKeepsData parks approval handlers (an idle handler keeps its
// events' data encoded) and checks that snapshots and the resumed run see
// the input as it was given.
func TestIdleKeepsData(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input *structpb.Struct
	}{
		{"no input", nil},
		{"one field", &structpb.Struct{Fields: map[string]*structpb.Value{"bench": structpb.NewStringValue("park")}}},
		{"nested", mustStruct(t, map[string]any{"amount": 12.5, "who": map[string]any{"name": "ada", "tags": []any{"a", true, nil}}})},
		// (An input that is not valid UTF-8 cannot be encoded; Start refuses
		// it, see TestBadInputRefused.)
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &idleCounter{idle: make(chan struct{}, 4)}
			e := engine.New(engine.Options{Journal: j})
			engine.CompactAlways(e)
			if err := e.Register(workflows.Approval()); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			want := proto.Clone(tc.input).(*structpb.Struct)
			if want == nil {
				want = &structpb.Struct{}
			}
			h, err := e.Start(ctx, "approval", tc.input, engine.StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			<-j.idle
			for range 2 { // a snapshot wakes the handler; it parks again
				snap, err := h.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !proto.Equal(snap.GetStart().GetData(), want) {
					t.Fatalf("snapshot's start data %v, want %v", snap.GetStart().GetData(), want)
				}
				if w := snap.GetSteps()[0].GetWaiters(); len(w) != 1 || !proto.Equal(w[0].GetResume().GetEvent().GetData(), want) {
					t.Fatalf("snapshot's waiter %v, want one resuming with %v", w, want)
				}
			}
			approve := &structpb.Struct{Fields: map[string]*structpb.Value{"approved": structpb.NewBoolValue(true)}}
			if err := h.SendEvent(ctx, engine.Event{Type: workflows.ApprovalEvent, Data: approve}, engine.SendOptions{}); err != nil {
				t.Fatal(err)
			}
			info, err := h.Wait(ctx)
			if err != nil || info.Status != engine.StatusCompleted {
				t.Fatalf("Wait: %v, %v", info.Status, err)
			}
			if got := info.Result.GetFields()["request"].GetStructValue(); !proto.Equal(got, want) {
				t.Errorf("the resumed run saw input %v, want %v", got, want)
			}
		})
	}
}

// TestCompactIdleAbove parks 2,000 approval handlers with a nested input
// and compares the heap they keep: encoding idle data (always, which only
// engine.CompactAlways asks for) must save memory against never encoding it
// (CompactIdleAbove -1), and with a threshold of
// 1,000 only the handlers that park once more than 1,000 are in memory are
// encoded, so the saving is about half.
func TestCompactIdleAbove(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap of 2,000 handlers")
	}
	const n = 2000
	input := mustStruct(t, map[string]any{"amount": 12.5, "who": map[string]any{"name": "ada", "tags": []any{"a", true, nil}}})
	// perHandler measures with Options.CompactIdleAbove set to above, or
	// with CompactAlways when above is 0 (which would take the default).
	perHandler := func(above int) float64 {
		t.Helper()
		j := &idleCounter{idle: make(chan struct{}, n)}
		e := engine.New(engine.Options{Journal: j, CompactIdleAbove: above})
		if above == 0 {
			engine.CompactAlways(e)
		}
		if err := e.Register(workflows.Approval()); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		before := liveHeap()
		for range n {
			// One at a time, so the count of handlers in memory when each
			// parks is its index.
			if _, err := e.Start(ctx, "approval", proto.Clone(input).(*structpb.Struct), engine.StartOptions{}); err != nil {
				t.Fatal(err)
			}
			<-j.idle
		}
		after := liveHeap()
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			t.Fatal(err)
		}
		return (float64(after) - float64(before)) / n
	}
	never, always, half := perHandler(-1), perHandler(0), perHandler(1000)
	t.Logf("bytes per idle handler: never encoded %.0f, always %.0f, above 1,000 in memory %.0f", never, always, half)
	saved := never - always
	if saved < 200 {
		t.Fatalf("encoding idle data saved %.0f bytes per handler, want at least 200", saved)
	}
	if half < always+saved/4 || half > never-saved/4 {
		t.Errorf("with the threshold at half the handlers: %.0f bytes per handler, want about halfway between %.0f and %.0f", half, always, never)
	}
}

// liveHeap is the heap's live bytes after a collection (unlike memInUse,
// not rounded to spans, so it does not depend on what earlier tests left).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestIdleKeepsCollectedData parks a handler between the events of a
// fan-in, its input and each event with data of its own, and one event
// sharing the input's data: all are encoded while it is idle (the first in
// the frozen struct itself, the others after it) and each is given back as
// it was when the fan-in completes.
func TestIdleKeepsCollectedData(t *testing.T) {
	input := mustStruct(t, map[string]any{"order": "o-1"})
	a := mustStruct(t, map[string]any{"who": "ada", "n": 1.0})
	b := mustStruct(t, map[string]any{"who": "bob", "tags": []any{"x", true}})
	w := engine.Workflow{Name: "gather", External: []string{"a", "b", "c"}, Steps: []engine.Step{
		{Name: "begin", Accepts: []string{engine.StartEvent}, Run: func(context.Context, *engine.StepContext, engine.Event) error { return nil }},
		{Name: "join", Accepts: []string{"a", "b", "c"}, Emits: []string{engine.StopEvent}, Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			got, err := sc.Collect(in, "a", "b", "c")
			if err != nil || got == nil {
				return err
			}
			out := map[string]any{}
			for _, ev := range got {
				out[ev.Type] = ev.Data.AsMap()
			}
			return sc.Send(engine.StopEvent, mustStruct(t, out))
		}},
	}}
	j := &idleCounter{idle: make(chan struct{}, 8)}
	e := engine.New(engine.Options{Journal: j})
	engine.CompactAlways(e)
	if err := e.Register(w); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := e.Start(ctx, "gather", input, engine.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-j.idle
	for _, ev := range []engine.Event{{Type: "a", Data: a}, {Type: "b", Data: b}} {
		if err := h.SendEvent(ctx, ev, engine.SendOptions{}); err != nil {
			t.Fatal(err)
		}
		<-j.idle
	}
	snap, err := h.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(snap.GetStart().GetData(), input) {
		t.Fatalf("snapshot's start data %v, want %v", snap.GetStart().GetData(), input)
	}
	if err := h.SendEvent(ctx, engine.Event{Type: "c", Data: input}, engine.SendOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := h.Wait(ctx)
	if err != nil || info.Status != engine.StatusCompleted {
		t.Fatalf("Wait: %v, %v: %s", info.Status, err, info.Error)
	}
	want := mustStruct(t, map[string]any{"a": a.AsMap(), "b": b.AsMap(), "c": input.AsMap()})
	if !proto.Equal(info.Result, want) {
		t.Fatalf("result %v, want %v", info.Result, want)
	}
}
