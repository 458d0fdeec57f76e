package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
)

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
		if err := h.SendEvent(context.Background(), ev); err != nil {
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

// eventLog is an in-memory EventLog.
type eventLog struct {
	mu  sync.Mutex
	evs []engine.Published
}

func (l *eventLog) Find(_ context.Context, key, handler string, since time.Time) (engine.Published, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.evs {
		if p.Key == key && (p.HandlerID == "" || p.HandlerID == handler) && !p.At.Before(since) {
			return p, true, nil
		}
	}
	return engine.Published{}, false, nil
}

func TestWaitForKey(t *testing.T) {
	w := engine.Workflow{Name: "order", Steps: []engine.Step{step("pay", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			p, err := sc.WaitForKey("payment:"+in.Data.Fields["order"].GetStringValue(), engine.KeyOptions{})
			if err != nil {
				return err
			}
			return sc.Send(engine.StopEvent, p.Data)
		})}}
	log := &eventLog{}
	rec := newRecorder()
	e := engine.New(engine.Options{Journal: rec, EventLog: log})
	if err := e.Register(w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	now := time.Now()
	log.evs = []engine.Published{
		{ID: "old", Key: "payment:B", At: now.Add(-time.Hour), Data: mustStruct(t, map[string]any{"n": "old"})},
		{ID: "other", Key: "payment:B", At: now.Add(time.Hour), HandlerID: "someone-else", Data: mustStruct(t, map[string]any{"n": "other"})},
		{ID: "a", Key: "payment:A", At: now.Add(time.Hour), Data: mustStruct(t, map[string]any{"n": "a"})},
	}

	// An event published since the handler started is taken at once.
	a := start(t, e, "order", map[string]any{"order": "A"})
	if info := wait(t, a); info.Result.Fields["n"].GetStringValue() != "a" {
		t.Fatalf("got %+v", info)
	}
	// Older events and events for other handlers are not: it waits, and a
	// publication wakes it.
	b := start(t, e, "order", map[string]any{"order": "B"})
	idle := rec.awaitIdle(t, b.ID(), 1)
	if wt := idle.Waiters[0]; wt.Key != "payment:B" || wt.EventType != engine.KeyEvent || wt.Since.IsZero() {
		t.Fatalf("waiter %+v", wt)
	}
	p := engine.Published{ID: "b", Key: "payment:B", At: time.Now(), Data: mustStruct(t, map[string]any{"n": "b"})}
	if err := b.SendEvent(context.Background(), engine.PublishedEvent(p), engine.WithIdempotencyKey("pub:b")); err != nil {
		t.Fatal(err)
	}
	if info := wait(t, b); info.Result.Fields["n"].GetStringValue() != "b" {
		t.Fatalf("got %+v", info)
	}
}

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
