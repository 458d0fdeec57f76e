package engine_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/wfd-dev/wfd/engine"
)

type hookKey struct{}

// TestOnStepRun: the hook sees every step run, with its handler, workflow,
// step and attempt; the step gets the context the hook returned; and end
// gets what the step returned.
func TestOnStepRun(t *testing.T) {
	var (
		mu   sync.Mutex
		runs []engine.StepRun
		ends []error
	)
	boom := errors.New("boom")
	e := engine.New(engine.Options{OnStepRun: func(ctx context.Context, run engine.StepRun) (context.Context, func(error)) {
		mu.Lock()
		runs = append(runs, run)
		mu.Unlock()
		return context.WithValue(ctx, hookKey{}, run.Step), func(err error) {
			mu.Lock()
			defer mu.Unlock()
			ends = append(ends, err)
		}
	}})
	failed := false
	wf := engine.Workflow{Name: "hooked", Steps: []engine.Step{{
		Name: "only", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
		Retry: engine.RetryPolicy{MaxAttempts: 2},
		Run: func(ctx context.Context, sc *engine.StepContext, _ engine.Event) error {
			if ctx.Value(hookKey{}) != "only" {
				return errors.New("the step did not get the hook's context")
			}
			if !failed {
				failed = true
				return boom
			}
			return sc.Send(engine.StopEvent, nil)
		},
	}}}
	if err := e.Register(wf); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := e.Start(ctx, "hooked", nil, engine.StartOptions{HandlerID: "h1"})
	if err != nil {
		t.Fatal(err)
	}
	if info, err := h.Wait(ctx); err != nil || info.Status != engine.StatusCompleted {
		t.Fatalf("Wait: %v %v (%s)", info.Status, err, info.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []engine.StepRun{{HandlerID: "h1", Workflow: "hooked", Step: "only", Attempt: 1}, {HandlerID: "h1", Workflow: "hooked", Step: "only", Attempt: 2}}
	if !slices.Equal(runs, want) {
		t.Errorf("runs %+v, want %+v", runs, want)
	}
	if len(ends) != 2 || !errors.Is(ends[0], boom) || ends[1] != nil {
		t.Errorf("ends %v, want [boom <nil>]", ends)
	}
}
