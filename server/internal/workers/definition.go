package workers

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/attrs"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"

	"github.com/wfd-dev/wfd/engine"
)

// workflowFromDefinition builds the engine workflow of a worker's
// definition: the same fields, and for each step a proxy Run that hands
// the step's runs to the workers serving the workflow (Registry.proxy). The
// result is validated by engine.Register, so a bad definition gets the
// errors a Go one would. version is the definition's: its runs go only to
// workers that registered that version.
func (r *Registry) workflowFromDefinition(d *wfdv1.WorkflowDefinition, version string) (engine.Workflow, error) {
	w := engine.Workflow{
		Name:        d.GetName(),
		Version:     version,
		Description: d.GetDescription(),
		External:    d.GetExternalEventTypes(),
		Timeout:     d.GetTimeout().AsDuration(),
		Concurrency: live.ConcurrencyFromProto(d.GetConcurrency()),
	}
	var err error
	if len(d.GetSearchAttributes()) > 0 {
		if w.Attributes, err = attrs.ParseSchema(d.GetSearchAttributes()); err != nil {
			return engine.Workflow{}, fmt.Errorf("workflow %q: search attributes: %w", d.GetName(), err)
		}
	}
	if w.InputSchema, err = schemaBytes(d.GetInputSchema()); err != nil {
		return engine.Workflow{}, fmt.Errorf("%w: workflow %q: input schema: %w", apierr.ErrInvalid, d.GetName(), err)
	}
	for _, et := range d.GetEventTypes() {
		raw, err := schemaBytes(et.GetSchema())
		if err != nil {
			return engine.Workflow{}, fmt.Errorf("%w: workflow %q: schema of %q: %w", apierr.ErrInvalid, d.GetName(), et.GetType(), err)
		}
		w.Events = append(w.Events, engine.EventType{Type: et.GetType(), Description: et.GetDescription(), Schema: raw})
	}
	for _, s := range d.GetSteps() {
		rp := s.GetRetry()
		w.Steps = append(w.Steps, engine.Step{
			Name:    s.GetName(),
			Accepts: s.GetAccepts(),
			Emits:   s.GetEmits(),
			Workers: int(s.GetWorkers()),
			Retry: engine.RetryPolicy{
				MaxAttempts:    int(rp.GetMaxAttempts()),
				InitialBackoff: rp.GetInitialBackoff().AsDuration(),
				MaxBackoff:     rp.GetMaxBackoff().AsDuration(),
				Multiplier:     rp.GetMultiplier(),
			},
			Timeout: s.GetTimeout().AsDuration(),
			Linger:  r.opts.RunLinger,
			Run:     r.proxy(d.GetName(), version, s.GetName()),
		})
	}
	return w, nil
}

// schemaBytes is a schema as the engine takes it: JSON, nil for none.
func schemaBytes(s *structpb.Struct) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	b, err := protojson.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding the schema: %w", err)
	}
	return b, nil
}
