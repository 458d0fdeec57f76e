package engine_test

import (
	"context"
	"testing"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestDropLeavesMemory: a handler dropped (another process owns it now)
// is lost without a failed change: it leaves memory, calls on it say
// ErrLost, and it hands the journal nothing more.
func TestDropLeavesMemory(t *testing.T) {
	ctx := context.Background()
	cancelled := make(chan struct{}, 1)
	j := newFaultyJournal(func(*engine.Change) verdict { return ack })
	e := faultyEngine(t, j, lostFlow("block", cancelled))
	h := start(t, e, "lost", nil)
	testwait.For(t, "the handler to be idle", func() bool { info, _ := h.Info(ctx); return info.Idle != nil })
	n := j.appended()
	h.Drop()
	assertLost(t, e, h)
	if got := j.appended(); got != n {
		t.Fatalf("%d changes appended after Drop", got-n)
	}
}
