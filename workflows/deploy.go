package workflows

import (
	"context"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/flow"
)

// DoneEvent is the event type that ends a deploy: {"ok": true|false}.
const DoneEvent = "done"

// Deploy is one deployment to its input's "environment": at most one per
// environment runs at a time (a concurrency key); the others wait, queued
// in the order they started, until the running one ends. Its step writes
// "deploying" and remembers the input; a "done" event from outside ends it
// with the environment, the version and whether it went well.
func Deploy() flow.Workflow {
	return flow.Workflow{
		Name:        "deploy",
		Description: `Deploys "version" to "environment", one at a time per environment; ends on "done".`,
		InputSchema: jsonSchema(obj(map[string]any{
			"environment": nameSchema("where to deploy; one deploy per environment runs at a time"),
			"version":     nameSchema("what to deploy"),
		}, "environment")),
		Concurrency: &flow.Concurrency{Key: "environment", Max: 1},
		External:    []string{DoneEvent},
		Events: []flow.EventType{{
			Type:        DoneEvent,
			Description: `The deploy ended: {"ok": true|false}.`,
			Schema:      jsonSchema(obj(map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok")),
		}},
		Steps: []flow.Step{{
			Name:    "deploy",
			Accepts: []string{flow.StartEvent},
			Run: func(_ context.Context, sc *flow.StepContext, in flow.Event) error {
				sc.Write("deploying", in.Data)
				return sc.Set("input", structpb.NewStructValue(in.Data))
			},
		}, {
			Name:    "done",
			Accepts: []string{DoneEvent},
			Emits:   []string{flow.StopEvent},
			Run: func(_ context.Context, sc *flow.StepContext, in flow.Event) error {
				out := map[string]*structpb.Value{"ok": structpb.NewBoolValue(in.Data.GetFields()["ok"].GetBoolValue())}
				// The deploy step's run may not have ended yet (a "done" sent
				// at once): then the result has no environment.
				if v, ok := sc.Get("input"); ok {
					for _, k := range []string{"environment", "version"} {
						if f := v.GetStructValue().GetFields()[k]; f != nil {
							out[k] = f
						}
					}
				}
				return sc.Send(flow.StopEvent, &structpb.Struct{Fields: out})
			},
		}},
	}
}
