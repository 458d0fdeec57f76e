package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

func workflowsCommand() *command {
	return &command{
		name:    "workflows",
		args:    "[WORKFLOW]",
		summary: "list the workflows the server runs, or show one with its schemas",
		detail: `Lists the workflows with their steps, whether the input has a schema, and
the event types each takes from outside: "any time" (one of its external
types) or "waited for" (accepted while a step waits for it), and what
runs their steps: wfd itself, or the step workers connected now. With a
WORKFLOW, shows that one in full: its input schema and, per event type,
what it means, its fields and its schema. RunWorkflow and SendEvent refuse
an input or event data that does not match its schema.`,
		maxArgs: 1, argWorkflows: true,
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					ws, err := c.Workflows(cctx)
					if err != nil {
						return err
					}
					if len(args) == 0 {
						return cf.printer(e).workflows(ws)
					}
					i := slices.IndexFunc(ws, func(w *wfdv1.Workflow) bool { return w.GetName() == args[0] })
					if i < 0 {
						// Worded as the server words an unknown workflow.
						return status.Errorf(codes.NotFound, "unknown workflow: %q", args[0])
					}
					return cf.printer(e).workflowDetails(ws[i])
				})
			}
		},
	}
}

// inputText says whether a workflow checks its input against a schema.
func inputText(w *wfdv1.Workflow) string {
	if w.GetInputSchema() == nil {
		return "any"
	}
	return "schema"
}

// servedText says what runs a workflow's steps: "wfd" (built in), "2
// workers", "no worker" (its runs wait for one).
func servedText(w *wfdv1.Workflow) string {
	switch n := w.GetWorkersConnected(); {
	case !w.GetServedByWorkers():
		return "wfd"
	case n == 0:
		return "no worker"
	case n == 1:
		return "1 worker"
	default:
		return fmt.Sprintf("%d workers", n)
	}
}

// eventTypeText is one event type a workflow takes from outside and when:
// "note (any time)", "approval (waited for)".
func eventTypeText(t *wfdv1.EventType) string {
	if t.GetExternal() {
		return t.GetType() + " (any time)"
	}
	return t.GetType() + " (waited for)"
}

// eventTypesText lists the event types a workflow takes from outside.
func eventTypesText(w *wfdv1.Workflow) string {
	if len(w.GetEventTypes()) == 0 {
		return "-"
	}
	parts := make([]string, len(w.GetEventTypes()))
	for i, t := range w.GetEventTypes() {
		parts[i] = eventTypeText(t)
	}
	return strings.Join(parts, ", ")
}

// workflowFields are the lines of `wfd workflows NAME`: the schemas in
// full, with their fields summed up as the task command does.
func workflowFields(w *wfdv1.Workflow) [][2]string {
	out := [][2]string{{"workflow", w.GetName()}}
	if w.GetDescription() != "" {
		out = append(out, [2]string{"description", w.GetDescription()})
	}
	out = append(out, [2]string{"steps", list(w.GetSteps())})
	if w.GetServedByWorkers() {
		out = append(out, [2]string{"served by", servedText(w) + " (step workers; wfd workers lists them)"})
	}
	if s := w.GetInputSchema(); s != nil {
		if f := schemaFieldsText(s); f != "" {
			out = append(out, [2]string{"input fields", f})
		}
		out = append(out, [2]string{"input schema", jsonText(s)})
	} else {
		out = append(out, [2]string{"input schema", "none (any object)"})
	}
	if len(w.GetEventTypes()) == 0 {
		return append(out, [2]string{"events", "none from outside"})
	}
	for i, t := range w.GetEventTypes() {
		key := ""
		if i == 0 {
			key = "events"
		}
		line := eventTypeText(t)
		if t.GetDescription() != "" {
			line += ": " + t.GetDescription()
		}
		out = append(out, [2]string{key, line})
		if s := t.GetSchema(); s != nil {
			if f := schemaFieldsText(s); f != "" {
				out = append(out, [2]string{"", "  fields: " + f})
			}
			out = append(out, [2]string{"", "  schema: " + jsonText(s)})
		} else {
			out = append(out, [2]string{"", "  schema: none (any object)"})
		}
	}
	return out
}
