package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// recorder is a Journal that keeps every record in memory, acknowledges at
// once, and lets tests wait for a record.
type recorder struct {
	mu      sync.Mutex
	records map[string][]engine.Record
	changes map[string][]*engine.Change
	notify  chan struct{}
}

func newRecorder() *recorder {
	return &recorder{records: map[string][]engine.Record{}, changes: map[string][]*engine.Change{}, notify: make(chan struct{})}
}

func (r *recorder) Append(c *engine.Change) {
	r.mu.Lock()
	r.records[c.HandlerID] = append(r.records[c.HandlerID], c.Records...)
	r.changes[c.HandlerID] = append(r.changes[c.HandlerID], c)
	close(r.notify)
	r.notify = make(chan struct{})
	r.mu.Unlock()
	c.Done(nil)
}

func (r *recorder) of(id string) []engine.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]engine.Record(nil), r.records[id]...)
}

func (r *recorder) changesOf(id string) []*engine.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*engine.Change(nil), r.changes[id]...)
}

// await waits until the handler's stream holds n records that match.
func (r *recorder) await(t *testing.T, id string, n int, match func(engine.Record) bool) []engine.Record {
	t.Helper()
	deadline := time.After(testwait.Timeout)
	for {
		r.mu.Lock()
		var got []engine.Record
		for _, rec := range r.records[id] {
			if match(rec) {
				got = append(got, rec)
			}
		}
		ch := r.notify
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %d matching records of %s; stream:\n%s", n, id, dump(r.of(id)))
		}
	}
}

// awaitIdle waits for the handler's n-th transition to idle.
func (r *recorder) awaitIdle(t *testing.T, id string, n int) *engine.Idle {
	t.Helper()
	got := r.await(t, id, n, func(rec engine.Record) bool { return rec.Kind == engine.RecordIdle && rec.Idle != nil })
	return got[n-1].Idle
}

func isIdle(rec engine.Record) bool { return rec.Kind == engine.RecordIdle && rec.Idle != nil }

func dump(recs []engine.Record) string {
	s := ""
	for _, r := range recs {
		s += fmt.Sprintf("  %s\n", describe(r))
	}
	return s
}

// describe renders a record without its timestamps, for comparisons.
func describe(r engine.Record) string {
	switch r.Kind {
	case engine.RecordStepState:
		c := r.Step
		return fmt.Sprintf("%d step %s w%d running=%v in=%s emitted=%v attempt=%d waiting=%v err=%q",
			r.Seq, c.Step, c.Worker, c.Running, c.InputType, c.Emitted, c.Attempt, c.Waiting, c.Error)
	case engine.RecordEvent:
		return fmt.Sprintf("%d event %s %s %v", r.Seq, r.Event.ID, r.Event.Type, r.Event.Data.AsMap())
	case engine.RecordIdle:
		if r.Idle == nil {
			return fmt.Sprintf("%d busy", r.Seq)
		}
		s := fmt.Sprintf("%d idle external=%v", r.Seq, r.Idle.External)
		for _, w := range r.Idle.Waiters {
			s += fmt.Sprintf(" waiter(%s %s %s %v deadline=%v)", w.ID, w.Step, w.EventType, w.Match.AsMap(), !w.Deadline.IsZero())
		}
		return s
	case engine.RecordTerminal:
		return fmt.Sprintf("%d %v result=%v error=%q", r.Seq, r.Status, r.Result.AsMap(), r.Error)
	case engine.RecordReleased:
		return fmt.Sprintf("%d released", r.Seq)
	case engine.RecordRestored:
		return fmt.Sprintf("%d restored", r.Seq)
	}
	return fmt.Sprintf("%d kind %d", r.Seq, r.Kind)
}

func newEngine(t *testing.T, wfs ...engine.Workflow) (*engine.Engine, *recorder) {
	t.Helper()
	return engineWith(t, engine.Options{}, wfs...)
}

func start(t *testing.T, e *engine.Engine, wf string, input map[string]any) *engine.Handler {
	t.Helper()
	h, err := e.Start(context.Background(), wf, mustStruct(t, input), engine.StartOptions{})
	if err != nil {
		t.Fatalf("Start(%s): %v", wf, err)
	}
	return h
}

func wait(t *testing.T, h *engine.Handler) engine.Info {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	info, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("handler %s did not finish: %v", h.ID(), err)
	}
	return info
}

func mustStruct(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	if m == nil {
		return nil
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func send(t *testing.T, h *engine.Handler, typ string, data map[string]any) {
	t.Helper()
	if err := h.SendEvent(context.Background(), engine.Event{Type: typ, Data: mustStruct(t, data)}, engine.SendOptions{}); err != nil {
		t.Fatalf("SendEvent(%s): %v", typ, err)
	}
}

// step builds a one-type step.
func step(name string, accepts string, emits []string, run engine.StepFunc) engine.Step {
	return engine.Step{Name: name, Accepts: []string{accepts}, Emits: emits, Run: run}
}
