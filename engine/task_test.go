package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
)

// TestAskHuman: a task is announced with the change that adds its waiter,
// and resolved by its answer, by its deadline, or dropped by a cancel.
func TestAskHuman(t *testing.T) {
	w := engine.Workflow{Name: "expense", Steps: []engine.Step{step("review", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			d := time.Duration(in.Data.Fields["ms"].GetNumberValue()) * time.Millisecond
			ans, err := sc.AskHuman(engine.Task{Title: "Approve expense", Description: "over budget", Assignee: "ada", Deadline: d,
				Schema: mustStruct(t, map[string]any{"type": "object"})})
			if errors.Is(err, engine.ErrTimeout) {
				return sc.Send(engine.StopEvent, mustStruct(t, map[string]any{"expired": true}))
			}
			if err != nil {
				return err
			}
			return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
				"answer": structpb.NewStructValue(ans.Data), "by": structpb.NewStringValue(ans.CompletedBy)}})
		})}}

	t.Run("answered", func(t *testing.T) {
		e, rec := newEngine(t, w)
		h := start(t, e, "expense", map[string]any{"ms": 0.0})
		idle := rec.awaitIdle(t, h.ID(), 1)
		task := idle.Waiters[0].Task
		if task == nil || task.Title != "Approve expense" || task.Assignee != "ada" || task.ID != h.ID()+":"+idle.Waiters[0].ID {
			t.Fatalf("idle task %+v waiter %+v", task, idle.Waiters[0])
		}
		var created bool
		for _, c := range rec.changesOf(h.ID()) {
			for _, nw := range c.NewWaiters {
				created = created || nw.Task != nil
			}
		}
		if !created {
			t.Fatal("no change announced the new task")
		}
		ev := engine.Event{Type: engine.TaskEvent, Data: mustStruct(t, map[string]any{
			"task_id": task.ID, "answer": map[string]any{"ok": true}, "completed_by": "ada", "completed_at": time.Now().Format(time.RFC3339Nano)})}
		if err := h.SendEvent(context.Background(), ev, engine.SendOptions{FromWfd: true}); err != nil {
			t.Fatal(err)
		}
		info := wait(t, h)
		if info.Status != engine.StatusCompleted || info.Result.Fields["by"].GetStringValue() != "ada" ||
			!info.Result.Fields["answer"].GetStructValue().Fields["ok"].GetBoolValue() {
			t.Fatalf("got %+v", info)
		}
		var resolved []engine.Resolution
		for _, c := range rec.changesOf(h.ID()) {
			resolved = append(resolved, c.Resolved...)
		}
		if len(resolved) != 1 || resolved[0].TimedOut || resolved[0].Waiter.Task.ID != task.ID {
			t.Fatalf("resolutions %+v", resolved)
		}
	})
	t.Run("expired", func(t *testing.T) {
		e, rec := newEngine(t, w)
		h := start(t, e, "expense", map[string]any{"ms": 30.0})
		if info := wait(t, h); !info.Result.Fields["expired"].GetBoolValue() {
			t.Fatalf("got %+v", info)
		}
		var timedOut bool
		for _, c := range rec.changesOf(h.ID()) {
			for _, r := range c.Resolved {
				timedOut = timedOut || (r.TimedOut && r.Waiter.Task != nil)
			}
		}
		if !timedOut {
			t.Fatal("the expiry was not reported as a resolution")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		e, rec := newEngine(t, w)
		h := start(t, e, "expense", map[string]any{"ms": 0.0})
		rec.awaitIdle(t, h.ID(), 1)
		if err := h.Cancel(context.Background()); err != nil {
			t.Fatal(err)
		}
		wait(t, h)
		ch := rec.changesOf(h.ID())
		if last := ch[len(ch)-1]; len(last.Dropped) != 1 || last.Dropped[0].Task == nil {
			t.Fatalf("last change dropped %+v", last.Dropped)
		}
	})
}

// TestAskHumanBadSchema: a task whose answer schema does not compile is
// refused when it is asked (the run fails, saying why), not found out
// when someone answers.
func TestAskHumanBadSchema(t *testing.T) {
	w := engine.Workflow{Name: "bad-task", Steps: []engine.Step{step("ask", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
			_, err := sc.AskHuman(engine.Task{Title: "Pick", Schema: mustStruct(t, map[string]any{"type": 12.0})})
			return err
		})}}
	e, _ := newEngine(t, w)
	h := start(t, e, "bad-task", map[string]any{})
	info := wait(t, h)
	if info.Status != engine.StatusFailed || !strings.Contains(info.Error, `asks task "Pick": its answer schema is not a valid JSON Schema`) {
		t.Fatalf("status %v, error %q", info.Status, info.Error)
	}
}

// TestAskHumanInput: a task's input must match its input schema (else
// the run fails when it asks, saying why); a matching one is asked.
func TestAskHumanInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input map[string]any
		want  string // the run's error; "" if it is asked
	}{
		{"matches", map[string]any{"amount": 12.0}, ""},
		{"does not match", map[string]any{"amount": "twelve"}, `asks task "Check": its input does not match its input schema: at '/amount': got string, want number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := engine.Workflow{Name: "input-task", Steps: []engine.Step{step("ask", engine.StartEvent, []string{engine.StopEvent},
				func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
					_, err := sc.AskHuman(engine.Task{Title: "Check", Input: mustStruct(t, tc.input),
						InputSchema: mustStruct(t, map[string]any{"type": "object", "properties": map[string]any{"amount": map[string]any{"type": "number"}}})})
					return err
				})}}
			e, rec := newEngine(t, w)
			h := start(t, e, "input-task", map[string]any{})
			if tc.want == "" {
				idle := rec.awaitIdle(t, h.ID(), 1)
				if in := idle.Waiters[0].Task.Input.GetFields()["amount"].GetNumberValue(); in != 12 {
					t.Fatalf("the asked task's input: %v", idle.Waiters[0].Task.Input)
				}
				return
			}
			info := wait(t, h)
			if info.Status != engine.StatusFailed || !strings.Contains(info.Error, tc.want) {
				t.Fatalf("status %v, error %q", info.Status, info.Error)
			}
		})
	}
}
