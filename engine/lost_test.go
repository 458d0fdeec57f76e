package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// errDisk is the error the journal double fails a change with.
var errDisk = errors.New("disk full")

// verdict is what faultyJournal does with a change.
type verdict int

const (
	ack  verdict = iota // acknowledge it as durable at once
	fail                // fail it at once, inside Append
	hold                // keep it for the test to acknowledge
	// stall keeps Append from returning (the handler's loop with it)
	// until unstall is closed; then the change is failed if Lost, else
	// acknowledged.
	stall
)

// faultyJournal is a Journal that keeps every change (and the snapshot it
// carries), and acknowledges each as decide says.
type faultyJournal struct {
	decide func(c *engine.Change) verdict

	mu        sync.Mutex
	changes   []*engine.Change
	snapshots []*statev1.HandlerState
	held      chan *engine.Change
	stalled   chan struct{} // closed when an Append stalls
	unstall   chan struct{}
	unstalled sync.Once
}

// release lets a stalled Append return; a test calls it when it ends at
// the latest (before the engine closes, which waits for the loop).
func (j *faultyJournal) release() { j.unstalled.Do(func() { close(j.unstall) }) }

func newFaultyJournal(decide func(c *engine.Change) verdict) *faultyJournal {
	return &faultyJournal{decide: decide, held: make(chan *engine.Change, 16), stalled: make(chan struct{}), unstall: make(chan struct{})}
}

func (j *faultyJournal) Append(c *engine.Change) {
	j.mu.Lock()
	j.changes = append(j.changes, c)
	j.snapshots = append(j.snapshots, c.Snapshot())
	v := j.decide(c)
	j.mu.Unlock()
	switch v {
	case ack:
		c.Done(nil)
	case fail:
		c.Done(errDisk)
	case hold:
		j.held <- c
	case stall:
		close(j.stalled)
		<-j.unstall
		if c.Lost() {
			c.Done(engine.ErrLost)
		} else {
			c.Done(nil)
		}
	}
}

// appended returns how many changes the journal has been handed.
func (j *faultyJournal) appended() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.changes)
}

// idleAppended waits until the journal has been handed a change in which
// the handler became idle, and returns its index. (Info says idle as soon
// as the loop knows it, which is before that change reaches the journal.)
func (j *faultyJournal) idleAppended(t *testing.T) int {
	t.Helper()
	i := -1
	testwait.For(t, "the change that makes the handler idle", func() bool {
		j.mu.Lock()
		defer j.mu.Unlock()
		for k := len(j.changes) - 1; k >= 0; k-- {
			for _, r := range j.changes[k].Records {
				if r.Kind == engine.RecordIdle && r.Idle != nil {
					i = k
					return true
				}
			}
		}
		return false
	})
	return i
}

// appendedSince returns the changes handed to the journal from the i-th on.
func (j *faultyJournal) appendedSince(i int) []*engine.Change {
	j.mu.Lock()
	defer j.mu.Unlock()
	if i >= len(j.changes) {
		return nil
	}
	return append([]*engine.Change(nil), j.changes[i:]...)
}

// snapshot returns the snapshot of the i-th change.
func (j *faultyJournal) snapshot(i int) *statev1.HandlerState {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.snapshots[i]
}

// next returns the next change held.
func (j *faultyJournal) next(t *testing.T) *engine.Change {
	t.Helper()
	return received(t, j.held, "a change to be held")
}

// faultyEngine returns an engine over j (Linger off, so each batch is a
// change of its own) with workflow w.
func faultyEngine(t *testing.T, j *faultyJournal, w engine.Workflow) *engine.Engine {
	t.Helper()
	e := engine.New(engine.Options{Journal: j, Linger: -1})
	engine.CompactAlways(e)
	if err := e.Register(w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = e.Close(ctx)
	})
	return e
}

// received waits for a value on ch, or fails t with what.
func received[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testwait.Timeout):
		t.Fatalf("gave up waiting for %s", what)
		var zero T
		return zero
	}
}

// busyRecord reports whether the change makes the handler leave idle.
func busyRecord(c *engine.Change) bool {
	for _, r := range c.Records {
		if r.Kind == engine.RecordIdle && r.Idle == nil {
			return true
		}
	}
	return false
}

// lostFlow waits for "go" (with then = "busy", it does not); then, with
// then = "block" or "busy", it blocks until its run is cancelled (and says
// so on cancelled); with then = "again", it waits for "again" as well, so
// the handler is idle once more.
func lostFlow(then string, cancelled chan<- struct{}) engine.Workflow {
	return engine.Workflow{Name: "lost", Steps: []engine.Step{step("w", engine.StartEvent, []string{engine.StopEvent},
		func(ctx context.Context, sc *engine.StepContext, _ engine.Event) error {
			if then != "busy" {
				if _, err := sc.WaitFor("go", engine.WaitOptions{}); err != nil {
					return err
				}
			}
			if then == "again" {
				if _, err := sc.WaitFor("again", engine.WaitOptions{}); err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, nil)
			}
			<-ctx.Done()
			cancelled <- struct{}{}
			return ctx.Err()
		})}}
}

// assertLost checks that h, whose change failed, has left memory and
// that whatever is asked of it says to load it again.
func assertLost(t *testing.T, e *engine.Engine, h *engine.Handler) {
	t.Helper()
	select {
	case <-h.Done():
	case <-time.After(testwait.Timeout):
		t.Fatal("the lost handler did not leave memory")
	}
	if _, ok := e.Handler(h.ID()); ok || e.Live() != 0 {
		t.Fatalf("the lost handler is still registered (%d live)", e.Live())
	}
	ctx := context.Background()
	isLost := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, engine.ErrLost) || !errors.Is(err, engine.ErrReleased) {
			t.Fatalf("%s on the lost handler: %v, want ErrLost (an ErrReleased)", what, err)
		}
	}
	isLost("SendEvent", h.SendEvent(ctx, engine.Event{Type: "go"}, engine.SendOptions{}))
	isLost("Cancel", h.Cancel(ctx))
	_, err := h.Info(ctx)
	isLost("Info", err)
	_, err = h.Snapshot(ctx)
	isLost("Snapshot", err)
	_, err = h.Release(ctx)
	isLost("Release", err)
	_, err = h.Wait(ctx)
	isLost("Wait", err)
}

// TestLostHandlerLeavesMemory: a change the journal fails makes its
// handler lost. Its callers get the journal's error; the handler leaves
// memory (its run in progress is cancelled) and hands the journal nothing
// more, whether the failure comes inside Append, while a run is in
// progress, or after the handler parked; calls on it say ErrLost; and a
// handler with its id can be started or restored again.
func TestLostHandlerLeavesMemory(t *testing.T) {
	ctx := context.Background()

	t.Run("failed in Append", func(t *testing.T) {
		cancelled := make(chan struct{}, 1)
		j := newFaultyJournal(func(c *engine.Change) verdict {
			if busyRecord(c) {
				return fail
			}
			return ack
		})
		e := faultyEngine(t, j, lostFlow("block", cancelled))
		h := start(t, e, "lost", nil)
		testwait.For(t, "the handler to be idle", func() bool { info, _ := h.Info(ctx); return info.Idle != nil })
		if err := h.SendEvent(ctx, engine.Event{Type: "go"}, engine.SendOptions{}); !errors.Is(err, errDisk) {
			t.Fatalf("SendEvent whose change failed: %v, want the journal's error", err)
		}
		n := j.appended()
		received(t, cancelled, "the run the event began to be cancelled with the handler")
		assertLost(t, e, h)
		if got := j.appended(); got != n {
			t.Fatalf("%d changes appended after the failed one", got-n)
		}
		// Restored from its last durable checkpoint, it takes the event.
		r, _, err := e.Restore(ctx, j.snapshot(n-2), engine.RestoreOptions{})
		if err != nil {
			t.Fatalf("Restore after the loss: %v", err)
		}
		if r == h {
			t.Fatal("Restore returned the lost handler")
		}
	})

	t.Run("failed while a run is in progress", func(t *testing.T) {
		cancelled := make(chan struct{}, 1)
		failing := true
		j := newFaultyJournal(func(c *engine.Change) verdict {
			if c.Created && failing {
				failing = false
				return hold
			}
			return ack
		})
		e := faultyEngine(t, j, lostFlow("busy", cancelled))
		started := make(chan error, 1)
		var h *engine.Handler
		go func() {
			var err error
			h, err = e.Start(ctx, "lost", nil, engine.StartOptions{HandlerID: "ghost"})
			started <- err
		}()
		c := j.next(t) // the creation, with the run it started
		c.Done(errDisk)
		if err := received(t, started, "Start to return"); !errors.Is(err, errDisk) {
			t.Fatalf("Start whose creation failed: %v, want the journal's error", err)
		}
		received(t, cancelled, "the run to be cancelled with the handler")
		assertLost(t, e, h)
		if got := j.appended(); got != 1 {
			t.Fatalf("%d changes appended after the failed creation", got-1)
		}
		// The id is free again: Start creates the handler afresh.
		again, err := e.Start(ctx, "lost", nil, engine.StartOptions{HandlerID: "ghost"})
		if err != nil || again == h {
			t.Fatalf("Start with the lost handler's id: %v", err)
		}
		if err := again.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("failed after the handler parked", func(t *testing.T) {
		holding := false // once a change is held, so are the later ones
		j := newFaultyJournal(func(c *engine.Change) verdict {
			if holding = holding || busyRecord(c); holding {
				return hold
			}
			return ack
		})
		e := faultyEngine(t, j, lostFlow("again", nil))
		h := start(t, e, "lost", nil)
		durable := j.idleAppended(t) // the index of the change that made it idle
		sent := make(chan error, 1)
		go func() { sent <- h.SendEvent(ctx, engine.Event{Type: "go"}, engine.SendOptions{}) }()
		first := j.next(t)  // the run the event began
		second := j.next(t) // it parked on "again": idle once more
		testwait.For(t, "the handler to park", func() bool { return engine.Parked(h) })
		if second.Lost() {
			t.Fatal("a change reports Lost before an earlier one failed")
		}
		first.Done(errDisk)
		if err := received(t, sent, "SendEvent to return"); !errors.Is(err, errDisk) {
			t.Fatalf("SendEvent whose change failed: %v, want the journal's error", err)
		}
		// The change handed over after the failed one must not be made
		// durable: the journal is told, and fails it.
		if !second.Lost() {
			t.Fatal("the change after the failed one does not report Lost")
		}
		second.Done(engine.ErrLost)
		assertLost(t, e, h)
		if got := j.appended(); got != durable+3 {
			t.Fatalf("%d changes appended after the failed one", got-durable-3)
		}
		// Restored from its last durable checkpoint, it waits for "go" again.
		r, info, err := e.Restore(ctx, j.snapshot(durable), engine.RestoreOptions{Accepting: &engine.Event{Type: "go"}})
		if err != nil || info.Idle == nil || len(info.Idle.Waiters) != 1 || info.Idle.Waiters[0].EventType != "go" {
			t.Fatalf("Restore from the last durable checkpoint: %v, %+v", err, info.Idle)
		}
		if r == h {
			t.Fatal("Restore returned the lost handler")
		}
	})

	t.Run("restored while it leaves", func(t *testing.T) {
		// The first busy change is held and the next one stalls; any later
		// change (the restored handler's, on a slow machine perhaps one
		// more of the lost handler's) is acknowledged.
		held, stalled := false, false
		j := newFaultyJournal(func(c *engine.Change) verdict {
			switch {
			case stalled:
				return ack
			case held:
				stalled = true
				return stall
			case busyRecord(c):
				held = true
				return hold
			}
			return ack
		})
		e := faultyEngine(t, j, lostFlow("again", nil))
		t.Cleanup(j.release) // cleanups run last first: before the engine closes
		h := start(t, e, "lost", nil)
		durable := j.idleAppended(t) // the index of the change that made it idle
		sent := make(chan error, 1)
		go func() { sent <- h.SendEvent(ctx, engine.Event{Type: "go"}, engine.SendOptions{}) }()
		first := j.next(t)
		received(t, j.stalled, "the next change to stall in Append")
		first.Done(errDisk)
		if err := received(t, sent, "SendEvent to return"); !errors.Is(err, errDisk) {
			t.Fatalf("SendEvent whose change failed: %v, want the journal's error", err)
		}
		// The lost handler cannot leave memory while its loop is in
		// Append: it is not returned, and a restore of its id waits for
		// it to go rather than failing with ErrHandlerExists.
		if _, ok := e.Handler(h.ID()); ok {
			t.Fatal("Engine.Handler returns a lost handler")
		}
		gone, cancel := context.WithCancel(ctx)
		cancel() // so a Restore that waits returns at once, with ctx's error
		if _, _, err := e.Restore(gone, j.snapshot(durable), engine.RestoreOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Restore while the lost handler is in memory: %v, want it to wait (until its context ends)", err)
		}
		j.release()
		r, _, err := e.Restore(ctx, j.snapshot(durable), engine.RestoreOptions{})
		if err != nil || r == h {
			t.Fatalf("Restore of a lost handler's id: %v", err)
		}
		select {
		case <-h.Done():
		default:
			t.Fatal("Restore returned before the lost handler left memory")
		}
		if got, ok := e.Handler(h.ID()); !ok || got != r {
			t.Fatal("the restored handler is not the live one")
		}
		// After the stalled change only the restored handler may append
		// (it may on a slow machine): nothing more of the lost one's.
		for i, c := range j.appendedSince(durable + 3) {
			if c.Lost() {
				t.Fatalf("change %d after the stalled one is the lost handler's", i+1)
			}
		}
	})
}
