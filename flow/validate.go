package flow

// Workflow.Validate's checks. They report every problem, in the order of
// the definition: the workflow's own fields, its external and declared
// event types, each step, and last what only the steps together say
// (something accepts the start, something emits the stop, every accepted
// type has a producer).

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/wfd-dev/wfd/internal/names"
	"github.com/wfd-dev/wfd/internal/schema"
)

// checker collects the problems of one definition.
type checker struct {
	w    *Workflow
	errs []error
	// produced holds the types that reach a handler: the start event,
	// the external types and every type a step emits.
	produced map[string]bool
}

func (c *checker) bad(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// err is the problems found, as one ErrInvalidWorkflow, or nil.
func (c *checker) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidWorkflow, errors.Join(c.errs...))
}

func (c *checker) check() {
	w := c.w
	if w.Name == "" {
		c.bad("workflow has no name")
	}
	if len(w.Steps) == 0 {
		c.bad("workflow %q has no steps", w.Name)
	}
	if w.Timeout < 0 {
		c.bad("workflow %q: negative timeout %v", w.Name, w.Timeout)
	}
	if w.Version != "" {
		if err := CheckVersion(w.Version); err != nil {
			c.bad("workflow %q: %v", w.Name, err)
		}
	}
	c.produced = map[string]bool{StartEvent: true}
	for _, t := range w.External {
		if p := outsideTypeProblem(t); p != "" {
			c.bad("workflow %q: %q cannot be an external event type: %s", w.Name, t, p)
		}
		c.produced[t] = true
	}
	if err := w.Attributes.Validate(); err != nil {
		c.bad("workflow %q: search attributes: %v", w.Name, err)
	}
	if w.Concurrency != nil {
		if err := w.Concurrency.Validate(); err != nil {
			c.bad("workflow %q: concurrency: %v", w.Name, err)
		}
	}
	c.checkSchemas()
	c.checkSteps()
}

// checkSchemas checks the input schema and the declared event types.
func (c *checker) checkSchemas() {
	w := c.w
	if len(w.InputSchema) > 0 {
		if _, err := schema.Compile(w.InputSchema); err != nil {
			c.bad("workflow %q: the input schema %v", w.Name, err)
		}
	}
	declared := make(map[string]bool, len(w.Events))
	for i, et := range w.Events {
		if p := outsideTypeProblem(et.Type); p != "" {
			c.bad("workflow %q: event %d: %q cannot be a declared event type: %s", w.Name, i, et.Type, p)
			continue
		}
		if declared[et.Type] {
			c.bad("workflow %q: event type %q is declared twice", w.Name, et.Type)
		}
		declared[et.Type] = true
		if err := names.Check("the description", et.Description, names.MaxTextBytes, false); err != nil {
			c.bad("workflow %q: event type %q: %v", w.Name, et.Type, err)
		}
		if len(et.Schema) == 0 {
			continue
		}
		if _, err := schema.Compile(et.Schema); err != nil {
			c.bad("workflow %q: the schema of event type %q %v", w.Name, et.Type, err)
		}
	}
}

// checkSteps checks each step, then that the steps together make a
// workflow that can start, complete, and run every step.
func (c *checker) checkSteps() {
	w := c.w
	seen := map[string]bool{}
	acceptsStart, emitsStop := false, false
	for i := range w.Steps {
		s := &w.Steps[i]
		c.checkStep(i, s, seen)
		if c.checkAccepts(s) {
			acceptsStart = true
		}
		if c.checkEmits(s) {
			emitsStop = true
		}
	}
	if len(w.Steps) > 0 && !acceptsStart {
		c.bad("workflow %q: no step accepts the %q event", w.Name, StartEvent)
	}
	if len(w.Steps) > 0 && !emitsStop {
		c.bad("workflow %q: no step emits the %q event, so it can never complete", w.Name, StopEvent)
	}
	for _, s := range w.Steps {
		for _, t := range s.Accepts {
			if t != "" && t != StopEvent && !c.produced[t] {
				c.bad("step %q accepts %q, which no step emits and the workflow does not accept from outside", s.Name, t)
			}
		}
	}
}

// checkStep checks step i's own settings; seen holds the names of the
// steps before it.
func (c *checker) checkStep(i int, s *Step, seen map[string]bool) {
	if s.Name == "" {
		c.bad("workflow %q: step %d has no name", c.w.Name, i)
	} else if seen[s.Name] {
		c.bad("workflow %q: duplicate step name %q", c.w.Name, s.Name)
	}
	seen[s.Name] = true
	if s.Run == nil {
		c.bad("step %q has no Run function", s.Name)
	}
	if len(s.Accepts) == 0 {
		c.bad("step %q accepts no event type", s.Name)
	}
	if s.Workers < 0 {
		c.bad("step %q: negative worker limit %d", s.Name, s.Workers)
	}
	if s.Timeout < 0 {
		c.bad("step %q: negative timeout %v", s.Name, s.Timeout)
	}
	if s.Retry.MaxAttempts < 0 || s.Retry.InitialBackoff < 0 || s.Retry.MaxBackoff < 0 {
		c.bad("step %q: negative retry setting", s.Name)
	}
}

// checkAccepts checks the types s accepts and reports whether one is the
// start event.
func (c *checker) checkAccepts(s *Step) (acceptsStart bool) {
	for _, t := range s.Accepts {
		if names.Reserved(t) {
			c.bad("step %q accepts %q: types starting with %q are the engine's", s.Name, t, names.ReservedPrefix)
		}
		switch t {
		case "":
			c.bad("step %q accepts an empty event type", s.Name)
		case StopEvent:
			c.bad("step %q accepts %q, which ends the handler and is never delivered", s.Name, StopEvent)
		case StartEvent:
			acceptsStart = true
		}
	}
	return acceptsStart
}

// checkEmits checks the types s emits, counts them as produced, and
// reports whether one is the stop event.
func (c *checker) checkEmits(s *Step) (emitsStop bool) {
	for _, t := range s.Emits {
		if names.Reserved(t) {
			c.bad("step %q emits %q: types starting with %q are the engine's", s.Name, t, names.ReservedPrefix)
		}
		switch t {
		case "":
			c.bad("step %q emits an empty event type", s.Name)
		case StartEvent:
			c.bad("step %q emits %q, which only the engine sends", s.Name, StartEvent)
		case StopEvent:
			emitsStop = true
		}
		c.produced[t] = true
	}
	return emitsStop
}

// outsideTypeProblem says what is wrong with t as a type that comes from
// outside (External, EventType), or "".
func outsideTypeProblem(t string) string {
	switch {
	case t == "":
		return "it is empty"
	case t == StartEvent, t == StopEvent:
		return "the engine sends it"
	case names.Reserved(t):
		return fmt.Sprintf("types starting with %q are sent by wfd itself", names.ReservedPrefix)
	case len(t) > names.MaxNameBytes:
		return fmt.Sprintf("it is %d bytes long, over the limit of %d", len(t), names.MaxNameBytes)
	case !utf8.ValidString(t):
		return "it is not valid UTF-8"
	}
	return ""
}

// MaxVersionLen bounds a version's name.
const MaxVersionLen = 64

// CheckVersion says what is wrong with a version's name, if anything: at
// most MaxVersionLen bytes of letters, digits, '.', '_' and '-' (no '@',
// which separates a workflow from its version where both are shown).
func CheckVersion(v string) error {
	if v == "" || len(v) > MaxVersionLen {
		return fmt.Errorf("version %q must have 1 to %d characters", v, MaxVersionLen)
	}
	for _, r := range v {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return fmt.Errorf("version %q has %q: use letters, digits, '.', '_' and '-'", v, r)
		}
	}
	return nil
}
