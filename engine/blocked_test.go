package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/wfd-dev/wfd/engine"
)

// TestBlockedRecords: StepContext.Blocked records each change of what a
// run waits for to be executed, and nothing when it repeats the current
// one.
func TestBlockedRecords(t *testing.T) {
	wf := engine.Workflow{Name: "blocked", Steps: []engine.Step{step("s", engine.StartEvent, []string{engine.StopEvent},
		func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			sc.Blocked("worker")
			sc.Blocked("worker") // no change: no record
			sc.Blocked("")
			sc.Blocked("")
			return sc.Send(engine.StopEvent, in.Data)
		})}}
	e, rec := newEngine(t, wf)
	h := start(t, e, "blocked", map[string]any{})
	if info := wait(t, h); info.Status != engine.StatusCompleted {
		t.Fatalf("status %v", info.Status)
	}
	var got []string
	for _, r := range rec.of(h.ID()) {
		if r.Kind == engine.RecordBlocked {
			got = append(got, fmt.Sprintf("%s/%d/%q", r.Blocked.Step, r.Blocked.Attempt, r.Blocked.On))
		}
	}
	if want := `[s/1/"worker" s/1/""]`; fmt.Sprint(got) != want {
		t.Fatalf("blocked records %v, want %s", got, want)
	}
}
