package engine

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"
)

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

// compile validates w (Workflow.Validate) and prepares it to run: on a
// copy, with its schemas compiled and its defaults filled in.
func compile(w Workflow) (*compiled, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	w.Steps = slices.Clone(w.Steps)
	w.External = slices.Clone(w.External)
	// The schemas are compiled from these bytes: the definition Workflows
	// returns keeps its own copy.
	w.InputSchema = bytes.Clone(w.InputSchema)
	w.Events = slices.Clone(w.Events)
	w.Attributes = maps.Clone(w.Attributes)
	if w.Concurrency != nil {
		c := *w.Concurrency
		w.Concurrency = &c
	}
	for i := range w.Events {
		w.Events[i].Schema = bytes.Clone(w.Events[i].Schema)
	}
	sch, err := compileSchemas(&w)
	if err != nil {
		return nil, err
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
	if c.def.Version == "" {
		c.def.Version = DefinitionHash(&c.def)
	}
	return c, nil
}
