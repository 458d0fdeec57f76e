package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/flow"
)

// Batch starts "n" (input, default 3, at most BatchMaxJobs) Job children
// and waits for all of them (up to "timeout_s" seconds if given), then
// completes with which completed, which failed and which were still
// pending. Job i fails when i is listed in the input's "fail" array; with
// "job_wait" every job first waits for an event of that type.
func Batch() flow.Workflow {
	return flow.Workflow{
		Name:        "batch",
		Description: `Starts "n" job children and waits for all of them.`,
		InputSchema: jsonSchema(obj(map[string]any{
			"n": map[string]any{"type": "integer", "minimum": 0, "maximum": BatchMaxJobs, "description": "how many jobs (default 3)"},
			"fail": map[string]any{"type": "array", "description": "the indexes of the jobs that fail (each below n)",
				"items": map[string]any{"type": "integer", "minimum": 0, "maximum": BatchMaxJobs - 1}},
			"timeout_s": secondsSchema("how long to wait for the jobs, in seconds (default: no limit)"),
			"job_wait":  nameSchema("an event type every job waits for before it ends"),
		})),
		// CheckInput keeps what the schema cannot say: every "fail" index
		// is below "n", and names fit in 200 bytes.
		CheckInput: func(in *structpb.Struct) error {
			_, err := parseBatch(in)
			return err
		},
		Steps: []flow.Step{{
			Name:    "fan_out",
			Accepts: []string{flow.StartEvent},
			Emits:   []string{flow.StopEvent},
			Run: func(_ context.Context, sc *flow.StepContext, in flow.Event) error {
				b, err := parseBatch(in.Data)
				if err != nil {
					return err
				}
				ids := make([]string, b.n)
				for i := range b.n {
					input := &structpb.Struct{Fields: map[string]*structpb.Value{
						"index": structpb.NewNumberValue(float64(i)),
						"fail":  structpb.NewBoolValue(b.fail[i]),
					}}
					if b.jobWait != "" {
						input.Fields["wait"] = structpb.NewStringValue(b.jobWait)
					}
					id, err := sc.StartChild("job", input)
					if err != nil {
						return err
					}
					ids[i] = id
				}
				res, err := sc.WaitForChildren(ids, b.timeout)
				if err != nil && !errors.Is(err, flow.ErrTimeout) {
					return err
				}
				return sc.Send(flow.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
					"completed": list(res.Completed),
					"failed":    list(res.Failed),
					"pending":   list(res.Pending),
				}})
			},
		}},
	}
}

type batchInput struct {
	n       int
	fail    map[int]bool
	timeout time.Duration
	jobWait string
}

func parseBatch(in *structpb.Struct) (batchInput, error) {
	f := in.GetFields()
	b := batchInput{n: 3, fail: map[int]bool{}}
	n, ok, err := number(f, "n", 0, BatchMaxJobs, true)
	if err != nil {
		return b, err
	}
	if ok {
		b.n = int(n)
	}
	if raw, ok := f["fail"]; ok {
		l, isList := raw.GetKind().(*structpb.Value_ListValue)
		if !isList {
			return b, fmt.Errorf(`"fail" must be a list of job indexes, got %s`, show(raw))
		}
		for _, v := range l.ListValue.GetValues() {
			i, isNum := v.GetKind().(*structpb.Value_NumberValue)
			if !isNum || i.NumberValue < 0 || i.NumberValue >= float64(b.n) || i.NumberValue != float64(int(i.NumberValue)) {
				return b, fmt.Errorf(`"fail" must list job indexes from 0 to n-1 (%d), got %s`, b.n-1, show(v))
			}
			b.fail[int(i.NumberValue)] = true
		}
	}
	if b.timeout, err = seconds(f, "timeout_s"); err != nil {
		return b, err
	}
	if b.jobWait, _, err = name(f, "job_wait"); err != nil {
		return b, err
	}
	return b, nil
}

// Job is Batch's child: it completes with {"index": i} (i from its input,
// if given), or fails when its input says "fail"; with "wait" it first
// waits for an event of that type.
func Job() flow.Workflow {
	return flow.Workflow{
		Name:        "job",
		Description: "A unit of work for batch: completes, or fails when asked to.",
		// The event its input's "wait" names is not declared: the input
		// chooses its type.
		InputSchema: jsonSchema(obj(map[string]any{
			"index": map[string]any{"type": "integer", "minimum": 0, "maximum": BatchMaxJobs, "description": "the job's index in its batch"},
			"fail":  map[string]any{"type": "boolean", "description": "fail instead of completing"},
			"wait":  nameSchema("an event type to wait for before ending"),
		})),
		CheckInput: func(in *structpb.Struct) error {
			_, err := parseJob(in)
			return err
		},
		Steps: []flow.Step{{
			Name:    "work",
			Accepts: []string{flow.StartEvent},
			Emits:   []string{flow.StopEvent},
			Run: func(_ context.Context, sc *flow.StepContext, in flow.Event) error {
				j, err := parseJob(in.Data)
				if err != nil {
					return err
				}
				if j.wait != "" {
					if _, err := sc.WaitFor(j.wait, flow.WaitOptions{}); err != nil {
						return err
					}
				}
				if j.fail {
					return fmt.Errorf("job %v failed as asked", j.index)
				}
				out := &structpb.Struct{Fields: map[string]*structpb.Value{}}
				if j.hasIndex {
					out.Fields["index"] = structpb.NewNumberValue(j.index)
				}
				return sc.Send(flow.StopEvent, out)
			},
		}},
	}
}

type jobInput struct {
	index    float64
	hasIndex bool
	fail     bool
	wait     string
}

func parseJob(in *structpb.Struct) (jobInput, error) {
	f := in.GetFields()
	var j jobInput
	var err error
	if j.index, j.hasIndex, err = number(f, "index", 0, BatchMaxJobs, true); err != nil {
		return j, err
	}
	if j.fail, err = boolean(f, "fail"); err != nil {
		return j, err
	}
	if j.wait, _, err = name(f, "wait"); err != nil {
		return j, err
	}
	return j, nil
}

func list(ids []string) *structpb.Value {
	vs := make([]*structpb.Value, len(ids))
	for i, id := range ids {
		vs[i] = structpb.NewStringValue(id)
	}
	return structpb.NewListValue(&structpb.ListValue{Values: vs})
}
