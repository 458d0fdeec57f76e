package workflows

import (
	"context"

	"github.com/wfd-dev/wfd/engine"
)

// Echo completes with its input.
func Echo() engine.Workflow {
	return engine.Workflow{
		Name:        "echo",
		Description: "Completes with its input.",
		InputSchema: anyObject("anything: the result"),
		Steps: []engine.Step{{
			Name:    "echo",
			Accepts: []string{engine.StartEvent},
			Emits:   []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				return sc.Send(engine.StopEvent, in.Data)
			},
		}},
	}
}
