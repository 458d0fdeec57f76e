package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
)

func workflowsCommand() *command {
	return &command{
		name:    "workflows",
		args:    "[WORKFLOW] | upgrade WORKFLOW --from V [--to V] [--handler ID]... [--dry-run] [--page-size N] | promote WORKFLOW VERSION | delete-version WORKFLOW VERSION",
		summary: "list the workflows the server runs, show one with its schemas and versions, or manage its versions",
		detail: `Lists the workflows with their current version, their steps, whether the
input has a schema, and the event types each takes from outside: "any
time" (one of its external types) or "waited for" (accepted while a step
waits for it), and what runs their steps: wfd itself, or the step workers
connected now. With a WORKFLOW, shows that one in full: its input schema
and, per event type, what it means, its fields and its schema; then its
versions, oldest first: which is current (the one run starts unless run
--version names another), who registered it (built in, or a worker's
name), the workers serving it, and its handlers running in memory,
released to the store and finished. RunWorkflow and SendEvent refuse an
input or event data that does not match its schema.

A first argument upgrade, promote or delete-version followed by more
arguments is an action on a workflow's versions:

  upgrade WORKFLOW --from V   moves the running handlers of version V to
      --to (default: the current version), each if the server finds from
      its state that the target can carry it on; --handler (repeatable)
      limits it to those handlers. Prints a line per handler (moved,
      refused or busy, with the reason) and the counts. Exit status 1 if
      any handler was refused or busy (a busy one runs a step: retry once
      it is idle); the others moved all the same. With --dry-run nothing
      moves: it prints which can move and exits 0. It pages through the
      handlers (--page-size a call); --timeout bounds all the calls.
  promote WORKFLOW VERSION    makes VERSION the one run starts.
  delete-version WORKFLOW VERSION
      deletes a version of a worker-defined workflow that is not current
      and that no unfinished handler runs (failed_precondition otherwise).`,
		maxArgs: 3, argWorkflows: true,
		argWords: versionActions(),
		define: func(fs *flagSet) action {
			cf := addClientFlags(fs)
			up := addUpgradeFlags(fs)
			return func(ctx context.Context, e *env, args []string) error {
				if len(args) > 1 && slices.Contains(versionActions(), args[0]) {
					return versionAction(ctx, e, cf, up, args)
				}
				if len(args) > 1 {
					return usageErrorf("workflows: wrong number of arguments (%q is not an action: there are %s)\nUsage: wfd workflows [WORKFLOW]",
						args[0], strings.Join(versionActions(), ", "))
				}
				if err := up.unused("workflows"); err != nil {
					return err
				}
				return cf.call(ctx, func(cctx context.Context, c *client.Client) error {
					if len(args) == 0 {
						ws, err := c.Workflows(cctx)
						if err != nil {
							return err
						}
						return cf.printer(e).workflows(ws)
					}
					w, err := c.Workflow(cctx, args[0])
					if err != nil {
						return err
					}
					return cf.printer(e).workflowDetails(w)
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
	if a := w.GetSearchAttributes(); len(a) > 0 {
		parts := make([]string, 0, len(a))
		for _, name := range slices.Sorted(maps.Keys(a)) {
			parts = append(parts, name+" "+a[name])
		}
		out = append(out, [2]string{"search attributes", strings.Join(parts, ", ")})
	}
	if c := w.GetConcurrency(); c != nil {
		out = append(out, [2]string{"concurrency", concurrencyText(c)})
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

// concurrencyText says what a concurrency limit allows, per key.
func concurrencyText(c *wfdv1.Concurrency) string {
	var parts []string
	if c.GetMax() > 0 {
		parts = append(parts, fmt.Sprintf("at most %d running", c.GetMax()))
	}
	if c.GetRate() > 0 {
		parts = append(parts, fmt.Sprintf("%d starts per %v", c.GetRate(), c.GetPer().AsDuration()))
	}
	key := "all handlers"
	if c.GetKey() != "" {
		key = "input " + c.GetKey()
	}
	over := "queues the rest"
	if c.GetRefuse() {
		over = "refuses the rest"
	}
	return fmt.Sprintf("%s per %s; %s", strings.Join(parts, ", "), key, over)
}
