package engine_test

import (
	"context"
	"testing"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestInterruptedRunStaysInProgress: a step that returns ErrInterrupted
// once Close began does not hold Close (which returns nil without its
// deadline passing), and its run, in progress in the checkpoint, runs
// again after a restore.
func TestInterruptedRunStaysInProgress(t *testing.T) {
	runs := make(chan string, 4)
	var e1 *engine.Engine
	cut := engine.Workflow{Name: "cut", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent},
		func(ctx context.Context, _ *engine.StepContext, in engine.Event) error {
			runs <- in.ID
			select {
			case <-e1.Closing():
				return engine.ErrInterrupted
			case <-ctx.Done():
				return ctx.Err()
			}
		})}}
	var rec *recorder
	e1, rec = newEngine(t, cut)
	h := start(t, e1, "cut", map[string]any{"k": "v"})
	first := <-runs
	snap, err := h.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	if err := e1.Close(ctx); err != nil {
		t.Fatalf("Close with an interrupted run = %v, want nil", err)
	}
	for _, r := range rec.of(h.ID()) {
		if r.Kind == engine.RecordStepState && !r.Step.Running {
			t.Fatalf("the interrupted run ended (%s); want it left in progress", describe(r))
		}
	}

	done := engine.Workflow{Name: "cut", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			runs <- in.ID
			return sc.Send(engine.StopEvent, in.Data)
		})}}
	e2, _ := newEngine(t, done)
	h2, _, err := e2.Restore(context.Background(), snap, engine.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again := <-runs; again != first {
		t.Fatalf("re-run got event %s, first run %s", again, first)
	}
	if info := wait(t, h2); info.Status != engine.StatusCompleted {
		t.Fatalf("got %+v", info)
	}
}

// TestInterruptedBeforeCloseFails: returned while the engine is not
// closing, ErrInterrupted fails the attempt like any error.
func TestInterruptedBeforeCloseFails(t *testing.T) {
	e, _ := newEngine(t, engine.Workflow{Name: "early", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent},
		func(context.Context, *engine.StepContext, engine.Event) error { return engine.ErrInterrupted })}})
	info := wait(t, start(t, e, "early", nil))
	if info.Status != engine.StatusFailed {
		t.Fatalf("got %+v, want failed", info)
	}
}
