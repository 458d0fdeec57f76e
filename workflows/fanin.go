package workflows

import (
	"context"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/flow"
)

// FanInWidth is how many items fanin processes in parallel.
const FanInWidth = 3

// FanIn emits three "item" events, squares each index in parallel (three
// workers), collects the three "done" events and completes with
// {"results": [0, 1, 4]} in index order.
func FanIn() flow.Workflow {
	return flow.Workflow{
		Name:        "fanin",
		Description: "Emits three events handled in parallel and collects them.",
		InputSchema: anyObject("ignored"),
		Steps: []flow.Step{
			{
				Name:    "split",
				Accepts: []string{flow.StartEvent},
				Emits:   []string{"item"},
				Run: func(_ context.Context, sc *flow.StepContext, _ flow.Event) error {
					for i := range FanInWidth {
						if err := sc.Send("item", num("index", float64(i))); err != nil {
							return err
						}
					}
					return nil
				},
			},
			{
				Name:    "square",
				Accepts: []string{"item"},
				Emits:   []string{"done"},
				Workers: FanInWidth,
				Run: func(_ context.Context, sc *flow.StepContext, in flow.Event) error {
					i := in.Data.GetFields()["index"].GetNumberValue()
					d := num("index", i)
					d.Fields["value"] = structpb.NewNumberValue(i * i)
					return sc.Send("done", d)
				},
			},
			{
				Name:    "gather",
				Accepts: []string{"done"},
				Emits:   []string{flow.StopEvent},
				Run: func(_ context.Context, sc *flow.StepContext, in flow.Event) error {
					types := make([]string, FanInWidth)
					for i := range types {
						types[i] = "done"
					}
					got, err := sc.Collect(in, types...)
					if err != nil || got == nil {
						return err
					}
					results := make([]*structpb.Value, FanInWidth)
					for _, ev := range got {
						f := ev.Data.GetFields()
						results[int(f["index"].GetNumberValue())] = f["value"]
					}
					return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
						"results": structpb.NewListValue(&structpb.ListValue{Values: results}),
					}})
				},
			},
		},
	}
}

func num(k string, v float64) *structpb.Struct {
	return &structpb.Struct{Fields: map[string]*structpb.Value{k: structpb.NewNumberValue(v)}}
}
