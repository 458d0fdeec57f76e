package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
)

// Batch starts "n" (input, default 3) Job children and waits for all of
// them (up to "timeout_s" seconds if given), then completes with which
// completed, which failed and which were still pending. Job i fails when i
// is listed in the input's "fail" array.
func Batch() engine.Workflow {
	return engine.Workflow{
		Name:        "batch",
		Description: `Starts "n" job children and waits for all of them.`,
		Steps: []engine.Step{{
			Name:    "fan_out",
			Accepts: []string{engine.StartEvent},
			Emits:   []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				f := in.Data.GetFields()
				n := 3
				if v, ok := f["n"]; ok {
					n = int(v.GetNumberValue())
				}
				fail := map[int]bool{}
				for _, v := range f["fail"].GetListValue().GetValues() {
					fail[int(v.GetNumberValue())] = true
				}
				ids := make([]string, n)
				for i := range n {
					input := &structpb.Struct{Fields: map[string]*structpb.Value{
						"index": structpb.NewNumberValue(float64(i)),
						"fail":  structpb.NewBoolValue(fail[i]),
					}}
					if v, ok := f["job_wait"]; ok {
						input.Fields["wait"] = v
					}
					id, err := sc.StartChild("job", input)
					if err != nil {
						return err
					}
					ids[i] = id
				}
				res, err := sc.WaitForChildren(ids, seconds(f["timeout_s"].GetNumberValue()))
				if err != nil && !errors.Is(err, engine.ErrTimeout) {
					return err
				}
				return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
					"completed": list(res.Completed),
					"failed":    list(res.Failed),
					"pending":   list(res.Pending),
				}})
			},
		}},
	}
}

// Job is Batch's child: it completes with {"index": i}, or fails when its
// input says "fail"; with "wait" it first waits for an event of that type.
func Job() engine.Workflow {
	return engine.Workflow{
		Name:        "job",
		Description: "A unit of work for batch: completes, or fails when asked to.",
		Steps: []engine.Step{{
			Name:    "work",
			Accepts: []string{engine.StartEvent},
			Emits:   []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				f := in.Data.GetFields()
				if w := f["wait"].GetStringValue(); w != "" {
					if _, err := sc.WaitFor(w, engine.WaitOptions{}); err != nil {
						return err
					}
				}
				if f["fail"].GetBoolValue() {
					return fmt.Errorf("job %v failed as asked", f["index"].GetNumberValue())
				}
				return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"index": f["index"]}})
			},
		}},
	}
}

func list(ids []string) *structpb.Value {
	vs := make([]*structpb.Value, len(ids))
	for i, id := range ids {
		vs[i] = structpb.NewStringValue(id)
	}
	return structpb.NewListValue(&structpb.ListValue{Values: vs})
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
