package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

// StepFunc is the code of a step. It runs in a goroutine of its own with the
// event it was started for. Returning nil finishes the run and commits what
// it sent and wrote; returning an error fails this attempt (and retries it,
// if the step's policy allows). A step that waits returns [ErrWaiting].
//
// ctx is cancelled when the step's timeout passes or the handler ends.
type StepFunc func(ctx context.Context, sc *StepContext, in Event) error

// Step is one event-driven unit of a workflow.
type Step struct {
	Name string
	// Accepts lists the event types that start a run of this step.
	Accepts []string
	// Emits lists the event types this step may send. Sending any other type
	// is an error: the declaration lets Register check that every accepted
	// type has a producer.
	Emits []string
	// Workers limits how many runs of this step execute at once (default 1).
	Workers int
	// Retry says how often, and after what pause, a failed run is tried again.
	Retry RetryPolicy
	// Timeout bounds one run; 0 means no limit. A run that times out fails
	// its attempt.
	Timeout time.Duration
	Run     StepFunc
}

// RetryPolicy is exponential backoff with a cap.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt: 0 and 1 both mean no retry.
	MaxAttempts int
	// InitialBackoff is the pause before the second attempt (default 100ms).
	InitialBackoff time.Duration
	// MaxBackoff caps the pause (default 10s).
	MaxBackoff time.Duration
	// Multiplier grows the pause after each attempt (default 2).
	Multiplier float64
}

// Backoff returns the pause before attempt (2 for the first retry).
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	d := p.InitialBackoff
	if d <= 0 {
		d = 100 * time.Millisecond
	}
	maxd := p.MaxBackoff
	if maxd <= 0 {
		maxd = 10 * time.Second
	}
	m := p.Multiplier
	if m < 1 {
		m = 2
	}
	for i := 2; i < attempt && d < maxd; i++ {
		d = time.Duration(float64(d) * m)
	}
	return min(d, maxd)
}

// Workflow is a named set of steps.
type Workflow struct {
	Name        string
	Description string
	Steps       []Step
	// External lists the event types that clients may send to a running
	// handler (SendEvent) for the steps that accept them. An event of another
	// type is accepted only while a waiter of the handler waits for it.
	External []string
	// Events declares event types the workflow takes from outside, External
	// ones or ones its steps wait for, with what they mean and the JSON
	// Schema of their data (see EventType). SendEvent refuses data its
	// type's schema refuses (a SchemaError).
	Events []EventType
	// InputSchema is a JSON Schema, as JSON, for the input (the start
	// event's data); nil accepts any object. Start refuses an input it
	// refuses (a SchemaError, ErrInvalidInput), before CheckInput, which
	// remains for what a schema cannot say. Like every schema here it
	// must be a JSON object and self-contained: a "$ref" may point inside
	// it, never at a file or URL. Draft 2020-12 applies unless "$schema"
	// names another; "format" is not checked.
	InputSchema []byte
	// Timeout bounds the whole run from its start; 0 means no limit. It is
	// kept as an absolute deadline, so restoring a snapshot does not restart it.
	Timeout time.Duration
	// CheckInput, if set, validates the input of a new handler before it
	// is created (Engine.Start, children too): an error refuses the start
	// with ErrInvalidInput and the error's text, and nothing is stored. It
	// runs on the caller's goroutine and must not block.
	CheckInput func(input *structpb.Struct) error
}

// checkInput runs the workflow's CheckInput; a panic in it is an error,
// not a crash of the caller.
func (c *compiled) checkInput(input *structpb.Struct) (err error) {
	check := c.def.CheckInput
	if check == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: workflow %q: checking the input panicked: %v", ErrInvalidInput, c.def.Name, p)
		}
	}()
	if err := check(input); err != nil {
		return fmt.Errorf("%w: workflow %q: %w", ErrInvalidInput, c.def.Name, err)
	}
	return nil
}

// Validate checks the definition and reports every problem it finds.
func (w *Workflow) Validate() error {
	_, err := w.check()
	return err
}

// check is Validate, which compiles the schemas: it returns them.
func (w *Workflow) check() (schemas, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if w.Name == "" {
		bad("workflow has no name")
	}
	if len(w.Steps) == 0 {
		bad("workflow %q has no steps", w.Name)
	}
	if w.Timeout < 0 {
		bad("workflow %q: negative timeout %v", w.Name, w.Timeout)
	}
	produced := map[string]bool{StartEvent: true}
	for _, t := range w.External {
		if p := outsideTypeProblem(t); p != "" {
			bad("workflow %q: %q cannot be an external event type: %s", w.Name, t, p)
		}
		produced[t] = true
	}
	sch := w.checkSchemas(bad)
	names := map[string]bool{}
	acceptsStart, emitsStop := false, false
	for i, s := range w.Steps {
		if s.Name == "" {
			bad("workflow %q: step %d has no name", w.Name, i)
		} else if names[s.Name] {
			bad("workflow %q: duplicate step name %q", w.Name, s.Name)
		}
		names[s.Name] = true
		if s.Run == nil {
			bad("step %q has no Run function", s.Name)
		}
		if len(s.Accepts) == 0 {
			bad("step %q accepts no event type", s.Name)
		}
		if s.Workers < 0 {
			bad("step %q: negative worker limit %d", s.Name, s.Workers)
		}
		if s.Timeout < 0 {
			bad("step %q: negative timeout %v", s.Name, s.Timeout)
		}
		if s.Retry.MaxAttempts < 0 || s.Retry.InitialBackoff < 0 || s.Retry.MaxBackoff < 0 {
			bad("step %q: negative retry setting", s.Name)
		}
		for _, t := range s.Accepts {
			if reserved(t) {
				bad("step %q accepts %q: types starting with %q are the engine's", s.Name, t, reservedPrefix)
			}
			switch t {
			case "":
				bad("step %q accepts an empty event type", s.Name)
			case StopEvent:
				bad("step %q accepts %q, which ends the handler and is never delivered", s.Name, StopEvent)
			case StartEvent:
				acceptsStart = true
			}
		}
		for _, t := range s.Emits {
			if reserved(t) {
				bad("step %q emits %q: types starting with %q are the engine's", s.Name, t, reservedPrefix)
			}
			switch t {
			case "":
				bad("step %q emits an empty event type", s.Name)
			case StartEvent:
				bad("step %q emits %q, which only the engine sends", s.Name, StartEvent)
			case StopEvent:
				emitsStop = true
			}
			produced[t] = true
		}
	}
	if len(w.Steps) > 0 && !acceptsStart {
		bad("workflow %q: no step accepts the %q event", w.Name, StartEvent)
	}
	if len(w.Steps) > 0 && !emitsStop {
		bad("workflow %q: no step emits the %q event, so it can never complete", w.Name, StopEvent)
	}
	for _, s := range w.Steps {
		for _, t := range s.Accepts {
			if t != "" && t != StopEvent && !produced[t] {
				bad("step %q accepts %q, which no step emits and the workflow does not accept from outside", s.Name, t)
			}
		}
	}
	if len(errs) > 0 {
		return schemas{}, fmt.Errorf("%w: %w", ErrInvalidWorkflow, errors.Join(errs...))
	}
	return sch, nil
}

// compiled is a validated workflow with the lookups the control loop needs.
type compiled struct {
	def       Workflow
	accepting map[string][]int // event type → indexes of steps that accept it
	external  map[string]bool
	emits     []map[string]bool // per step
	// wakeable: some step accepts an external type, so the handler can always
	// be woken from outside.
	wakeable bool
	schemas  schemas
}

func compile(w Workflow) (*compiled, error) {
	sch, err := w.check()
	if err != nil {
		return nil, err
	}
	w.Steps = slices.Clone(w.Steps)
	w.External = slices.Clone(w.External)
	// The schemas are compiled from these bytes: the definition Workflows
	// returns keeps its own copy.
	w.InputSchema = bytes.Clone(w.InputSchema)
	w.Events = slices.Clone(w.Events)
	for i := range w.Events {
		w.Events[i].Schema = bytes.Clone(w.Events[i].Schema)
	}
	c := &compiled{
		def:       w,
		schemas:   sch,
		accepting: map[string][]int{},
		external:  map[string]bool{},
		emits:     make([]map[string]bool, len(w.Steps)),
	}
	for _, t := range w.External {
		c.external[t] = true
	}
	for i := range c.def.Steps {
		s := &c.def.Steps[i]
		if s.Workers == 0 {
			s.Workers = 1
		}
		if s.Retry.MaxAttempts == 0 {
			s.Retry.MaxAttempts = 1
		}
		for _, t := range s.Accepts {
			if !slices.Contains(c.accepting[t], i) {
				c.accepting[t] = append(c.accepting[t], i)
			}
			if c.external[t] {
				c.wakeable = true
			}
		}
		c.emits[i] = map[string]bool{}
		for _, t := range s.Emits {
			c.emits[i][t] = true
		}
	}
	return c, nil
}

// reservedPrefix starts the event types the engine and server use among
// themselves (TaskEvent, KeyEvent, ChildEvent).
const reservedPrefix = "wfd."

func reserved(t string) bool { return strings.HasPrefix(t, reservedPrefix) }
