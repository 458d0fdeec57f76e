// Command worker is the console's browser tests' step worker: one process
// serving two versions of a worker-defined workflow, expense-report (as
// server/worker_versions_test.go defines it). v1: "review" waits for an
// "approve" event and finishes with the version that ran it. v2 adds a
// step ("audit", on an "audit" event from outside) and an optional input
// field ("note"). v2 registers after v1 and becomes current; handlers
// started with RunWorkflow's version "v1" run v1.
//
//	go run ./console/e2e/worker --addr 127.0.0.1:7233
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/protobuf/types/known/structpb"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/flow"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7233", "wfd server `host:port`")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string) error {
	c, err := client.Dial(addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	w, err := worker.New(c.Conn(), worker.Options{Name: "console-e2e", MaxRuns: 8}, expense("v1"), expense("v2"))
	if err != nil {
		return err
	}
	if err := w.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

func expense(version string) worker.Workflow {
	review := func(_ context.Context, sc worker.Context, _ flow.Event) error {
		if _, err := sc.WaitFor("approve", flow.WaitOptions{}); err != nil {
			return err // flow.ErrWaiting parks the run
		}
		return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"version": structpb.NewStringValue(version)}})
	}
	def := flow.Workflow{Name: "expense-report", Version: version,
		Description: "An expense report that waits for an approve event (console e2e worker).",
		Events:      []flow.EventType{{Type: "approve"}},
		InputSchema: []byte(`{"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}`),
		Steps:       []flow.Step{{Name: "review", Accepts: []string{flow.StartEvent}, Emits: []string{flow.StopEvent}}}}
	run := map[string]worker.StepFunc{"review": review}
	if version == "v2" {
		def.InputSchema = []byte(`{"type": "object", "properties": {"amount": {"type": "number"}, "note": {"type": "string"}}, "required": ["amount"]}`)
		def.External = []string{"audit"}
		def.Steps = append(def.Steps, flow.Step{Name: "audit", Accepts: []string{"audit"}})
		run["audit"] = func(context.Context, worker.Context, flow.Event) error { return nil }
	}
	return worker.Workflow{Definition: def, Run: run}
}
