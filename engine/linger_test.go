package engine_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestStepLinger: a step's own Linger holds a handler's change while its
// run is in progress past the engine's Linger (1 ns here), so the start
// and what the run does share one commit; with the engine's alone, the
// start is committed while the run is in progress.
func TestStepLinger(t *testing.T) {
	for _, tc := range []struct {
		name   string
		linger bool
	}{
		{"engine linger only", false},
		{"step linger", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec *recorder
			var id string
			ids := make(chan string, 1)
			step := engine.Step{Name: "s", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
				Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
					// A call to the loop: the loop settles its batch after
					// it, in a later burst than the start's.
					if err := sc.Set("k", structpb.NewBoolValue(true)); err != nil {
						return err
					}
					if !tc.linger {
						// The start is committed while this run is in progress.
						id := <-ids
						testwait.For(t, "the start committed alone", func() bool { return len(rec.changesOf(id)) == 1 })
					}
					return sc.Send(engine.StopEvent, nil)
				}}
			if tc.linger {
				step.Linger = testwait.Timeout
			}
			var e *engine.Engine
			e, rec = engineWith(t, engine.Options{Linger: 1}, engine.Workflow{Name: "w", Steps: []engine.Step{step}})
			h := start(t, e, "w", nil)
			id = h.ID()
			ids <- id
			if info := wait(t, h); info.Status != engine.StatusCompleted {
				t.Fatalf("status %v (%s)", info.Status, info.Error)
			}
			want := map[bool]int{false: 2, true: 1}[tc.linger]
			if cs := rec.changesOf(id); len(cs) != want || !cs[0].Created || cs[len(cs)-1].Status != engine.StatusCompleted {
				t.Fatalf("%d changes, want %d, the first creating the handler and the last completing it", len(cs), want)
			}
		})
	}
}
