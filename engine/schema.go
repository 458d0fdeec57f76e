package engine

// Typed schemas: a workflow's JSON Schemas for its input and for the
// event types it takes from outside (flow.EventType), which
// Workflow.Validate checks, compiled by Register and checked by Start and
// by the acceptance of an outside event (accept.go).

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/schema"
)

// SchemaError is the error of a payload that its workflow's schema
// refuses: a new handler's input (the error is ErrInvalidInput) or the
// data of an event from outside (ErrInvalidEvent). Nothing is stored for
// it.
type SchemaError struct {
	Workflow string
	// EventType is the refused event's type; "" for an input.
	EventType string
	// Problems name the failing values, one each, as "at '/approved':
	// got string, want boolean" (a JSON pointer into the payload; an empty
	// one is the payload itself). At most 20; then the last says how many
	// more.
	Problems []string
}

func (e *SchemaError) Error() string {
	problems := strings.Join(e.Problems, "; ")
	if e.EventType == "" {
		return fmt.Sprintf("%v: workflow %q: the input does not match the workflow's input schema: %s", ErrInvalidInput, e.Workflow, problems)
	}
	return fmt.Sprintf("%v: workflow %q: the data of event %q does not match its schema: %s", ErrInvalidEvent, e.Workflow, e.EventType, problems)
}

// Unwrap makes the error ErrInvalidInput (an input) or ErrInvalidEvent
// (an event) for errors.Is.
func (e *SchemaError) Unwrap() error {
	if e.EventType == "" {
		return ErrInvalidInput
	}
	return ErrInvalidEvent
}

// schemas are a workflow's compiled schemas.
type schemas struct {
	input *schema.Schema
	// events holds the declared types that have a schema.
	events map[string]*schema.Schema
}

// compileSchemas compiles the schemas of w, which Validate checked.
func compileSchemas(w *Workflow) (schemas, error) {
	var out schemas
	if len(w.InputSchema) > 0 {
		s, err := schema.Compile(w.InputSchema)
		if err != nil {
			return schemas{}, fmt.Errorf("%w: workflow %q: the input schema %w", ErrInvalidWorkflow, w.Name, err)
		}
		out.input = s
	}
	for _, et := range w.Events {
		if len(et.Schema) == 0 {
			continue
		}
		s, err := schema.Compile(et.Schema)
		if err != nil {
			return schemas{}, fmt.Errorf("%w: workflow %q: the schema of event type %q %w", ErrInvalidWorkflow, w.Name, et.Type, err)
		}
		if out.events == nil {
			out.events = map[string]*schema.Schema{}
		}
		out.events[et.Type] = s
	}
	return out, nil
}

// checkInputSchema checks a new handler's input against the workflow's
// input schema.
func (c *compiled) checkInputSchema(input *structpb.Struct) error {
	if c.schemas.input == nil {
		return nil
	}
	return c.schemaError("", c.schemas.input.Validate(input))
}

// checkEventSchema checks an outside event's data against the schema the
// workflow declares for its type.
func (c *compiled) checkEventSchema(ev Event) error {
	s := c.schemas.events[ev.Type]
	if s == nil {
		return nil
	}
	return c.schemaError(ev.Type, s.Validate(ev.Data))
}

func (c *compiled) schemaError(eventType string, err error) error {
	if err == nil {
		return nil
	}
	e := &SchemaError{Workflow: c.def.Name, EventType: eventType}
	var se *schema.Error
	if errors.As(err, &se) {
		e.Problems = append(e.Problems, se.Problems...)
		if se.More > 0 {
			e.Problems = append(e.Problems, fmt.Sprintf("and %d more", se.More))
		}
	} else {
		e.Problems = []string{err.Error()}
	}
	return e
}
