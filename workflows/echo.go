package workflows

import (
	"context"

	"github.com/wfd-dev/wfd/flow"
)

// Echo completes with its input.
func Echo() flow.Workflow {
	return flow.Workflow{
		Name:        "echo",
		Description: "Completes with its input.",
		InputSchema: anyObject("anything: the result"),
		Steps: []flow.Step{{
			Name:    "echo",
			Accepts: []string{flow.StartEvent},
			Emits:   []string{flow.StopEvent},
			Run: func(_ context.Context, sc *flow.StepContext, in flow.Event) error {
				return sc.Send(flow.StopEvent, in.Data)
			},
		}},
	}
}
