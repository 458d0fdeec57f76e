package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/engine"
)

// TestChildren: a parent starts children, with ids derived from its input,
// and WaitForChildren reports where they stand, when all end or at its
// timeout.
func TestChildren(t *testing.T) {
	job := engine.Workflow{Name: "job", Steps: []engine.Step{step("work", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			if in.Data.Fields["fail"].GetBoolValue() {
				return errors.New("job failed")
			}
			if in.Data.Fields["hang"].GetBoolValue() {
				_, err := sc.WaitFor("never", engine.WaitOptions{})
				return err
			}
			return sc.Send(engine.StopEvent, in.Data)
		})}}
	batch := engine.Workflow{Name: "batch", Steps: []engine.Step{step("fan", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			var ids []string
			for i := range int(in.Data.Fields["n"].GetNumberValue()) {
				id, err := sc.StartChild("job", mustStruct(t, map[string]any{"i": float64(i), "fail": i%3 == 2,
					"hang": in.Data.Fields["hang"].GetBoolValue() && i == 0}))
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			res, err := sc.WaitForChildren(ids, time.Duration(in.Data.Fields["ms"].GetNumberValue())*time.Millisecond)
			if err != nil && !errors.Is(err, engine.ErrTimeout) {
				return err
			}
			return sc.Send(engine.StopEvent, mustStruct(t, map[string]any{
				"completed": float64(len(res.Completed)), "failed": float64(len(res.Failed)), "pending": float64(len(res.Pending))}))
		})}}

	t.Run("all finish", func(t *testing.T) {
		e, rec := newEngine(t, job, batch)
		h := start(t, e, "batch", map[string]any{"n": 6.0, "ms": 0.0})
		info := wait(t, h)
		if got := fmt.Sprint(info.Result.AsMap()); got != "map[completed:4 failed:2 pending:0]" {
			t.Fatalf("result %s (%v %s)", got, info.Status, info.Error)
		}
		ch := rec.changesOf(h.ID())
		kids := ch[len(ch)-1].Children
		if len(kids) != 6 {
			t.Fatalf("children %v", kids)
		}
		for i, k := range kids {
			// Derived from the parent, the input event and the position,
			// so a re-run names the same children.
			if want := fmt.Sprintf("%s.1.%d", h.ID(), i); k != want {
				t.Fatalf("child %d is %q, want %q", i, k, want)
			}
		}
		// A child knows its parent.
		if c := rec.changesOf(ch[len(ch)-1].Children[0]); c[0].Parent != h.ID() {
			t.Fatalf("child's parent %q", c[0].Parent)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		e, _ := newEngine(t, job, batch)
		h := start(t, e, "batch", map[string]any{"n": 3.0, "ms": 100.0, "hang": true})
		info := wait(t, h)
		if got := fmt.Sprint(info.Result.AsMap()); got != "map[completed:1 failed:1 pending:1]" {
			t.Fatalf("result %s (%v %s)", got, info.Status, info.Error)
		}
	})
}
