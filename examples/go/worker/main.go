// Command worker serves two workflows written in Go to a stock wfd serve:
// approval-go (waits for an "approval" event with a deadline, writes its
// progress to the stream, completes with the decision) and expense-go
// (asks a person to approve an expense: a human task with an answer
// schema). Nothing of them is compiled into wfd; start handlers of them
// from any client or the CLI:
//
//	go run ./examples/go/worker --addr 127.0.0.1:7233
//	wfd run approval-go --input '{"amount": 42}'
//	wfd send <handler> approval '{"approved": true}'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

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
	w, err := worker.New(c.Conn(), worker.Options{Name: "examples-go", MaxRuns: 8},
		worker.Workflow{Definition: approvalDef, Run: map[string]worker.StepFunc{"decide": decide}},
		worker.Workflow{Definition: expenseDef, Run: map[string]worker.StepFunc{"review": review}},
	)
	if err != nil {
		return err
	}
	fmt.Println("serving approval-go and expense-go to", addr, "(Ctrl-C stops)")
	if err := w.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// The definitions: steps, the events they accept and emit, and the JSON
// Schemas wfd checks inputs and events against before anything is stored.
var (
	approvalDef = flow.Workflow{
		Name:        "approval-go",
		Description: `Waits up to a day for an "approval" event and completes with the decision.`,
		InputSchema: []byte(`{"type": "object", "description": "the request to approve"}`),
		Events: []flow.EventType{{
			Type:        "approval",
			Description: `The decision: {"approved": true|false, "comment": "..."}.`,
			Schema:      []byte(`{"type": "object", "required": ["approved"], "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string"}}}`),
		}},
		Steps: []flow.Step{{Name: "decide", Accepts: []string{flow.StartEvent}, Emits: []string{flow.StopEvent}}},
	}
	expenseDef = flow.Workflow{
		Name:        "expense-go",
		Description: `Asks the input's "approver" to approve an expense (a human task).`,
		InputSchema: []byte(`{"type": "object", "properties": {"approver": {"type": "string", "minLength": 1}, "amount": {"type": "number"}}}`),
		Steps:       []flow.Step{{Name: "review", Accepts: []string{flow.StartEvent}, Emits: []string{flow.StopEvent}}},
	}
)

// decide runs again from the top when the approval arrives: the wait
// that parked the first run then answers at once.
func decide(_ context.Context, sc worker.Context, in flow.Event) error {
	sc.Write("progress", fields(map[string]any{"stage": "waiting for approval", "request": in.Data.AsMap()}))
	ev, err := sc.WaitFor("approval", flow.WaitOptions{Timeout: 24 * time.Hour})
	if errors.Is(err, flow.ErrTimeout) {
		return sc.Send(flow.StopEvent, fields(map[string]any{"approved": false, "comment": "no answer within a day"}))
	}
	if err != nil {
		return err // flow.ErrWaiting parks the run: return it as it is
	}
	return sc.Send(flow.StopEvent, fields(map[string]any{
		"approved": ev.Data.GetFields()["approved"].GetBoolValue(),
		"comment":  ev.Data.GetFields()["comment"].GetStringValue(),
		"request":  in.Data.AsMap(),
	}))
}

func review(_ context.Context, sc worker.Context, in flow.Event) error {
	approver := in.Data.GetFields()["approver"].GetStringValue()
	if approver == "" {
		approver = "finance"
	}
	ans, err := sc.AskHuman(flow.Task{
		Title:    "Approve expense",
		Assignee: approver,
		Schema: fields(map[string]any{
			"type": "object", "required": []any{"approved"},
			"properties": map[string]any{"approved": map[string]any{"type": "boolean"}, "reason": map[string]any{"type": "string"}},
		}),
	})
	if err != nil {
		return err
	}
	return sc.Send(flow.StopEvent, fields(map[string]any{
		"decision": ans.Data.AsMap(), "reviewed_by": ans.CompletedBy, "expense": in.Data.AsMap(),
	}))
}

func fields(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err) // the maps above are plain JSON values
	}
	return s
}
