package engine

// Typed schemas: a workflow's JSON Schemas for its input and for the
// event types it takes from outside, compiled once by Register and checked
// by Start and by the acceptance of an outside event (accept.go).

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/schema"
)

// EventType declares an event type a workflow takes from outside, that is
// from SendEvent: what it means and, optionally, the JSON Schema its data
// must match. A declared type is one of the workflow's External types
// (accepted at any time) or one its steps wait for with WaitFor (accepted
// while a step waits for it); declaring the latter is what tells clients
// (ListWorkflows, `wfd workflows`) that the workflow wants it. Declaring
// a type does not make it accepted: External and the waiters decide that,
// as without declarations. The types wfd sends itself (task answers,
// published keys, children's ends: the "wfd." types) cannot be declared;
// a task's answer is checked against the task's own schema.
type EventType struct {
	// Type is the event type: not empty, not "start" or "stop", not one
	// of the engine's "wfd." types, at most 256 bytes of UTF-8.
	Type string
	// Description says what the event means, for people (at most 64 KiB).
	Description string
	// Schema is a JSON Schema, as JSON, for the event's data (which is
	// always an object); nil accepts any object. It must be a JSON object
	// and self-contained (see InputSchema).
	Schema []byte
}

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

// checkSchemas checks the declared event types and compiles every schema,
// reporting each problem through bad.
func (w *Workflow) checkSchemas(bad func(format string, args ...any)) schemas {
	var out schemas
	if len(w.InputSchema) > 0 {
		s, err := schema.Compile(w.InputSchema)
		if err != nil {
			bad("workflow %q: the input schema %v", w.Name, err)
		}
		out.input = s
	}
	declared := make(map[string]bool, len(w.Events))
	for i, et := range w.Events {
		if p := outsideTypeProblem(et.Type); p != "" {
			bad("workflow %q: event %d: %q cannot be a declared event type: %s", w.Name, i, et.Type, p)
			continue
		}
		if declared[et.Type] {
			bad("workflow %q: event type %q is declared twice", w.Name, et.Type)
		}
		declared[et.Type] = true
		if err := checkText("the description", et.Description, maxTextBytes, false); err != nil {
			bad("workflow %q: event type %q: %v", w.Name, et.Type, err)
		}
		if len(et.Schema) == 0 {
			continue
		}
		s, err := schema.Compile(et.Schema)
		if err != nil {
			bad("workflow %q: the schema of event type %q %v", w.Name, et.Type, err)
			continue
		}
		if out.events == nil {
			out.events = map[string]*schema.Schema{}
		}
		out.events[et.Type] = s
	}
	return out
}

// outsideTypeProblem says what is wrong with t as a type that comes from
// outside (External, EventType), or "".
func outsideTypeProblem(t string) string {
	switch {
	case t == "":
		return "it is empty"
	case t == StartEvent, t == StopEvent:
		return "the engine sends it"
	case reserved(t):
		return fmt.Sprintf("types starting with %q are sent by wfd itself", reservedPrefix)
	case len(t) > maxNameBytes:
		return fmt.Sprintf("it is %d bytes long, over the limit of %d", len(t), maxNameBytes)
	case !utf8.ValidString(t):
		return "it is not valid UTF-8"
	}
	return ""
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
