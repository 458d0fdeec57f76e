package worker

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/flow"
)

// definition is the wire form of w's definition (its Run functions
// aside): what the worker registers for it. The server validates it as
// the engine's Register validates a Go workflow (flow.Workflow.Validate).
func definition(w flow.Workflow) (*wfdv1.WorkflowDefinition, error) {
	d := &wfdv1.WorkflowDefinition{Name: w.Name, Version: w.Version, Description: w.Description, ExternalEventTypes: w.External}
	if len(w.Attributes) > 0 {
		d.SearchAttributes = w.Attributes.Declarations()
	}
	var err error
	if d.InputSchema, err = schemaStruct(w.InputSchema); err != nil {
		return nil, fmt.Errorf("worker: workflow %q: input schema: %w", w.Name, err)
	}
	if w.Timeout > 0 {
		d.Timeout = durationpb.New(w.Timeout)
	}
	if c := w.Concurrency; c.Limited() {
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("worker: workflow %q: concurrency: %w", w.Name, err)
		}
		d.Concurrency = &wfdv1.Concurrency{Key: c.Key, Max: uint32(c.Max), Rate: uint32(c.Rate), Refuse: c.Refuse} //nolint:gosec // Validate bounds them
		if c.Per > 0 {
			d.Concurrency.Per = durationpb.New(c.Per)
		}
	}
	for _, et := range w.Events {
		sch, err := schemaStruct(et.Schema)
		if err != nil {
			return nil, fmt.Errorf("worker: workflow %q: schema of %q: %w", w.Name, et.Type, err)
		}
		d.EventTypes = append(d.EventTypes, &wfdv1.EventType{Type: et.Type, Description: et.Description, Schema: sch})
	}
	for _, s := range w.Steps {
		sd := &wfdv1.StepDefinition{Name: s.Name, Accepts: s.Accepts, Emits: s.Emits, Workers: int32(s.Workers),
			Retry: &wfdv1.RetryPolicy{MaxAttempts: int32(s.Retry.MaxAttempts), Multiplier: s.Retry.Multiplier}}
		if s.Retry.InitialBackoff > 0 {
			sd.Retry.InitialBackoff = durationpb.New(s.Retry.InitialBackoff)
		}
		if s.Retry.MaxBackoff > 0 {
			sd.Retry.MaxBackoff = durationpb.New(s.Retry.MaxBackoff)
		}
		if s.Timeout > 0 {
			sd.Timeout = durationpb.New(s.Timeout)
		}
		d.Steps = append(d.Steps, sd)
	}
	return d, nil
}

// schemaStruct is a JSON Schema as the API carries it (nil for none).
func schemaStruct(raw []byte) (*structpb.Struct, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	st, err := structpb.NewStruct(m)
	if err != nil {
		return nil, fmt.Errorf("converting: %w", err)
	}
	return st, nil
}
