package engine_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/engine"
)

// tagged declares search attributes; its first step sets "stage" (and
// whatever the start event's "set" holds) and waits for "go", whose data
// it sets too; its second step ends.
func tagged() engine.Workflow {
	return engine.Workflow{
		Name:       "tagged",
		Attributes: attrs.Schema{"customer": attrs.String, "amount": attrs.Int, "stage": attrs.String, "tags": attrs.KeywordList},
		Steps: []engine.Step{
			{Name: "work", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
				Run: func(_ context.Context, sc *engine.StepContext, ev engine.Event) error {
					if err := sc.SetAttributes(mustStructT(map[string]any{"stage": "waiting"})); err != nil {
						return err
					}
					if set := ev.Data.GetFields()["set"].GetStructValue(); set != nil {
						if err := sc.SetAttributes(set); err != nil {
							return err
						}
					}
					goEv, err := sc.WaitFor("go", engine.WaitOptions{})
					if err != nil {
						return err
					}
					if err := sc.SetAttributes(goEv.Data); err != nil {
						return err
					}
					return sc.Send(engine.StopEvent, nil)
				}},
		},
	}
}

func mustStructT(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return s
}

// lastChange returns the handler's latest change.
func lastChange(t *testing.T, r *recorder, id string) *engine.Change {
	t.Helper()
	cs := r.changesOf(id)
	if len(cs) == 0 {
		t.Fatalf("no change of %s", id)
	}
	return cs[len(cs)-1]
}

// TestAttributes: a start's attributes are in the creating change; a
// step's updates ride the change of the run that made them (no change of
// their own), a null deletes; the checkpoint keeps them across a restore.
func TestAttributes(t *testing.T) {
	e, rec := newEngine(t, tagged())
	ctx := context.Background()
	h, err := e.Start(ctx, "tagged", nil, engine.StartOptions{HandlerID: "a1",
		Attributes: mustStructT(map[string]any{"customer": "acme", "amount": 120.0, "tags": []any{"eu", "vip"}, "stage": nil})})
	if err != nil {
		t.Fatal(err)
	}
	created := rec.changesOf("a1")[0]
	want := attrs.Set{"customer": attrs.StringValue("acme"), "amount": attrs.IntValue(120), "tags": attrs.KeywordListValue("eu", "vip")}
	// The first run may have run in the creating batch, and set stage.
	got := maps.Clone(created.Attributes)
	delete(got, "stage")
	if !created.Created || !got.Equal(want) {
		t.Fatalf("creating change has %v, want %v", created.Attributes, want)
	}
	rec.awaitIdle(t, "a1", 1)
	want["stage"] = attrs.StringValue("waiting")
	if c := lastChange(t, rec, "a1"); !c.Attributes.Equal(want) {
		t.Fatalf("idle change has %v, want %v", c.Attributes, want)
	}
	if got, err := h.Info(ctx); err != nil || !got.Attributes.Equal(want) {
		t.Fatalf("Info: %v, %v; want attributes %v", got.Attributes, err, want)
	}

	// A restore from the checkpoint has them.
	snap, err := h.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e2, rec2 := newEngine(t, tagged())
	h2, info, err := e2.Restore(ctx, snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !info.Attributes.Equal(want) {
		t.Fatalf("restored with %v, want %v", info.Attributes, want)
	}
	before := len(rec2.changesOf("a1"))
	send(t, h2, "go", map[string]any{"stage": "done", "customer": nil})
	if got := wait(t, h2); got.Status != engine.StatusCompleted {
		t.Fatalf("ended %v: %s", got.Status, got.Error)
	}
	delete(want, "customer")
	want["stage"] = attrs.StringValue("done")
	// The update rides the change of the run that made it, which ends
	// the handler: no change of its own.
	for _, c := range rec2.changesOf("a1")[before:] {
		if c.Attributes.Equal(want) {
			if !c.Status.Terminal() {
				t.Fatalf("the update has a change of its own before the run's end (status %v)", c.Status)
			}
			return
		}
	}
	t.Fatalf("no change carries %v", want)
}

// TestAttributesRefused: a start with an undeclared attribute or a value
// of the wrong type is refused (ErrInvalidAttributes) and creates
// nothing; a step's bad update fails the run and sets nothing.
func TestAttributesRefused(t *testing.T) {
	e, rec := newEngine(t, tagged())
	ctx := context.Background()
	for _, bad := range []map[string]any{
		{"nope": "x"},
		{"amount": "120"},
		{"amount": 1.5},
		{"tags": "eu"},
		{"customer": 7.0},
	} {
		_, err := e.Start(ctx, "tagged", nil, engine.StartOptions{HandlerID: "bad", Attributes: mustStructT(bad)})
		if !errors.Is(err, engine.ErrInvalidAttributes) {
			t.Fatalf("start with %v: %v, want ErrInvalidAttributes", bad, err)
		}
	}
	if n := len(rec.changesOf("bad")); n != 0 {
		t.Fatalf("refused starts made %d changes", n)
	}
	h, err := e.Start(ctx, "tagged", mustStructT(map[string]any{"set": map[string]any{"amount": "lots"}}), engine.StartOptions{HandlerID: "bad-step"})
	if err != nil {
		t.Fatal(err)
	}
	info := wait(t, h)
	if info.Status != engine.StatusFailed {
		t.Fatalf("a run with a bad update ended %v, want failed", info.Status)
	}
	if _, ok := info.Attributes["amount"]; ok {
		t.Fatalf("the bad update was stored: %v", info.Attributes)
	}
}
