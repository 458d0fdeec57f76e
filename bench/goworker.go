package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"google.golang.org/protobuf/types/known/structpb"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/flow"
	"github.com/wfd-dev/wfd/workflows"
)

// The workflows a worker process serves for --worker: the same as the
// built-in echo and approval (package workflows), under their own names.
// Every language's bench worker (examples/ts/bench-worker.mjs,
// examples/python/bench_worker.py, and `wfd bench worker`) serves them.
const (
	workerEchoWorkflow     = "bench-echo"
	workerApprovalWorkflow = "bench-approval"
)

// goWorkerMain is `wfd bench worker`: the Go bench worker, serving
// bench-echo and bench-approval until ctx ends (SIGTERM or SIGINT).
func goWorkerMain(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:7233", "`host:port` of the wfd server")
	maxRuns := fs.Int("max-runs", 64, "step `runs` at once")
	name := fs.String("name", "bench-go", "worker `name` shown by wfd workers")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	c, err := client.Dial(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "wfd bench worker: %v\n", err)
		return exitError
	}
	defer func() { _ = c.Close() }()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := worker.New(c.Conn(), worker.Options{Name: *name, MaxRuns: *maxRuns, Logger: log}, benchWorkflows()...)
	if err == nil {
		err = w.Run(ctx)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "wfd bench worker: %v\n", err)
		return exitError
	}
	return exitOK
}

func benchWorkflows() []worker.Workflow {
	step := func(name string) []flow.Step {
		return []flow.Step{{Name: name, Accepts: []string{flow.StartEvent}, Emits: []string{flow.StopEvent}}}
	}
	return []worker.Workflow{
		{
			Definition: flow.Workflow{Name: workerEchoWorkflow, Description: "Completes with its input (as echo).", Steps: step("echo")},
			Run: map[string]worker.StepFunc{"echo": func(_ context.Context, sc worker.Context, in flow.Event) error {
				return sc.Send(flow.StopEvent, in.Data)
			}},
		},
		{
			Definition: flow.Workflow{
				Name:        workerApprovalWorkflow,
				Description: `Waits for an "approval" event and completes with the decision (as approval).`,
				Events:      []flow.EventType{{Type: workflows.ApprovalEvent, Schema: workflows.ApprovalEventSchema()}},
				Steps:       step("decide"),
			},
			Run: map[string]worker.StepFunc{"decide": decide},
		},
	}
}

// decide is workflows.Approval's step written against worker.Context.
func decide(_ context.Context, sc worker.Context, in flow.Event) error {
	ev, err := sc.WaitFor(workflows.ApprovalEvent, flow.WaitOptions{})
	if errors.Is(err, flow.ErrWaiting) {
		sc.Write("question", &structpb.Struct{Fields: map[string]*structpb.Value{
			"question": structpb.NewStringValue("approve this request?"),
			"request":  structpb.NewStructValue(in.Data),
			"answer":   structpb.NewStringValue(`send an "approval" event with {"approved": true|false, "comment": "..."}`),
		}})
		return err
	}
	if err != nil {
		return err
	}
	return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
		"approved": structpb.NewBoolValue(ev.Data.GetFields()["approved"].GetBoolValue()),
		"comment":  structpb.NewStringValue(ev.Data.GetFields()["comment"].GetStringValue()),
		"request":  structpb.NewStructValue(in.Data),
	}})
}
