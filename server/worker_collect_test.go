package server_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// TestWorkerFanOutAndCollect: a fan-out served by two workers, joined with
// Collect over the wire: the join completes once, with every result.
func TestWorkerFanOutAndCollect(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	def := engine.Workflow{Name: "fan-remote", Steps: []engine.Step{
		{Name: "fan", Accepts: []string{engine.StartEvent}, Emits: []string{"item"}},
		{Name: "work", Accepts: []string{"item"}, Emits: []string{"done"}, Workers: 2},
		{Name: "join", Accepts: []string{"done"}, Emits: []string{engine.StopEvent}},
	}}
	num := func(n float64) *structpb.Struct {
		return &structpb.Struct{Fields: map[string]*structpb.Value{"n": structpb.NewNumberValue(n)}}
	}
	run := map[string]worker.StepFunc{
		"fan": func(_ context.Context, sc worker.Context, _ engine.Event) error {
			for i := 1; i <= 3; i++ {
				if err := sc.Send("item", num(float64(i))); err != nil {
					return err
				}
			}
			return nil
		},
		"work": func(_ context.Context, sc worker.Context, in engine.Event) error {
			return sc.Send("done", num(10*in.Data.GetFields()["n"].GetNumberValue()))
		},
		"join": func(_ context.Context, sc worker.Context, in engine.Event) error {
			evs, err := sc.Collect(in, "done", "done", "done")
			if err != nil || evs == nil {
				return err
			}
			sum := 0.0
			for _, ev := range evs {
				sum += ev.Data.GetFields()["n"].GetNumberValue()
			}
			return sc.Send(engine.StopEvent, num(sum))
		},
	}
	startWorker(t, ts, "a", worker.Workflow{Definition: def, Run: run})
	startWorker(t, ts, "b", worker.Workflow{Definition: def, Run: run})
	workersServing(t, ts, "fan-remote", 2)
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "fan-remote", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	var fin *wfdv1.HandlerFinished
	for _, r := range collect(t, c, res.GetHandler().GetHandlerId(), 0) {
		if f := r.GetHandlerFinished(); f != nil {
			fin = f
		}
	}
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || fin.GetResult().GetFields()["n"].GetNumberValue() != 60 {
		t.Fatalf("finished %v, want completed with n 60", fin)
	}
}
