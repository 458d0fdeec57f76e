package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/engine"
)

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

// TestWaitForKey: a step takes an event published under its key since the
// handler started at once; otherwise it waits, and a publication wakes it.
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
	engine.CompactAlways(e)
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
	if err := b.SendEvent(context.Background(), engine.PublishedEvent(p), engine.SendOptions{IdempotencyKey: "pub:b", FromWfd: true}); err != nil {
		t.Fatal(err)
	}
	if info := wait(t, b); info.Result.Fields["n"].GetStringValue() != "b" {
		t.Fatalf("got %+v", info)
	}
}
