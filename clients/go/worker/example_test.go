package worker_test

import (
	"context"
	"errors"
	"log"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/flow"
)

// A workflow defined in Go and served to a stock wfd serve: its step waits
// a day at most for an "approval" event and completes with the decision.
// The same step runs in process too, through worker.InProcess. A complete
// program is examples/go/worker.
func Example() {
	decide := func(_ context.Context, sc worker.Context, in flow.Event) error {
		ev, err := sc.WaitFor("approval", flow.WaitOptions{Timeout: 24 * time.Hour})
		if errors.Is(err, flow.ErrWaiting) {
			sc.Write("question", in.Data) // once per park
			return err                    // parks the run; the worker keeps nothing
		}
		if err != nil {
			return err
		}
		return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
			"approved": ev.Data.GetFields()["approved"]}})
	}
	def := flow.Workflow{
		Name:   "approval-go",
		Events: []flow.EventType{{Type: "approval", Schema: []byte(`{"type":"object","required":["approved"]}`)}},
		Steps:  []flow.Step{{Name: "decide", Accepts: []string{flow.StartEvent}, Emits: []string{flow.StopEvent}}},
	}

	c, err := client.Dial("127.0.0.1:7233")
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	w, err := worker.New(c.Conn(), worker.Options{Name: "approvals", MaxRuns: 8},
		worker.Workflow{Definition: def, Run: map[string]worker.StepFunc{"decide": decide}})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = w.Run(ctx) // until ctx ends; reconnects on its own; a refused definition ends it
}
