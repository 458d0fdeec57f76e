package engine

// Whether an event from outside a handler may enter it: the engine's one
// definition, used by Handler.SendEvent (in the handler's loop) and by any
// other caller that must decide it from a handler's state.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wfd-dev/wfd/internal/names"
	pl "github.com/wfd-dev/wfd/internal/payload"
)

// SendOptions tune Handler.SendEvent.
type SendOptions struct {
	// IdempotencyKey makes a send safe to retry: an event whose key the
	// handler has seen among its latest 1,024 is acknowledged and not
	// delivered again. The keys are part of the handler's state.
	IdempotencyKey string
	// FromWfd says the event comes from wfd itself: a task's answer, a
	// published key, a child's end. Only then may its type be one of the
	// reserved "wfd." types (TaskEvent, KeyEvent, ChildEvent), and its data,
	// checked where it entered wfd and possibly read from a store written
	// before that, is sanitized rather than refused, so that a parent always
	// learns that its child ended. Without it a reserved type is
	// ErrInvalidEvent.
	FromWfd bool
}

// EventRefusedError is the ErrInvalidEvent of an event that the handler's
// workflow does not accept from outside and that no step of the handler
// waits for.
type EventRefusedError struct {
	HandlerID string
	Workflow  string
	// Type is the refused event's type.
	Type string
	// Accepted are the types the workflow accepts from outside, sorted.
	Accepted []string
}

func (e *EventRefusedError) Error() string {
	return fmt.Sprintf("%v: workflow %q does not accept %q from outside (%s) and no step of handler %s waits for it",
		ErrInvalidEvent, e.Workflow, e.Type, acceptedList(e.Accepted), e.HandlerID)
}

// Unwrap makes the error ErrInvalidEvent for errors.Is.
func (e *EventRefusedError) Unwrap() error { return ErrInvalidEvent }

// acceptedList describes the event types a workflow accepts from outside:
// `it accepts "a", "b"` or `it accepts none`.
func acceptedList(types []string) string {
	if len(types) == 0 {
		return "it accepts none"
	}
	q := make([]string, len(types))
	for i, t := range types {
		q[i] = strconv.Quote(t)
	}
	return "it accepts " + strings.Join(q, ", ")
}

// CheckEvent returns the error SendEvent would refuse ev with whatever the
// handler: no type, a type only the engine or wfd itself sends, data that
// breaks the payload limits. SendEvent runs it first; a caller that
// consults its own store before it loads a handler runs it before that, so
// that a bad event is refused the same way whatever the handler's state.
func (e *Engine) CheckEvent(ev Event, opts SendOptions) error {
	if err := checkEventType(ev.Type, opts.FromWfd); err != nil {
		return err
	}
	if opts.FromWfd {
		return nil // sanitized by SendEvent, not refused
	}
	return pl.Check(e.lim.payload(), "event.data", ev.Data)
}

// checkEventType refuses the types no sender from outside may use.
func checkEventType(t string, fromWfd bool) error {
	switch {
	case t == "":
		return fmt.Errorf("%w: event has no type", ErrInvalidEvent)
	case t == StartEvent, t == StopEvent:
		return fmt.Errorf("%w: %q is reserved", ErrInvalidEvent, t)
	case names.Reserved(t) && !fromWfd:
		return fmt.Errorf("%w: event type %q is reserved: types starting with %q are sent by wfd itself (task answers, published keys, children's ends)",
			ErrInvalidEvent, t, names.ReservedPrefix)
	}
	return nil
}

// accepts decides whether an event from outside may enter a handler in
// state s: it is ErrInvalidEvent for a type no sender from outside may use,
// a HandlerDoneError once the handler has ended, an EventRefusedError
// when the workflow does not accept the type from outside and no step
// waits for it, and a SchemaError when the event's data does not match
// the schema the workflow declares for its type (unless wfd sends it).
// SendEvent decides in the handler's loop, Restore before it restores a
// handler for the event: a refused event changes nothing and loads nothing.
func (s *state) accepts(ev Event, fromWfd bool) error {
	if err := checkEventType(ev.Type, fromWfd); err != nil {
		return err
	}
	if s.status.Terminal() {
		return errHandlerDone(s.id, s.status)
	}
	if ev.Type == TaskUpdateEvent {
		if !fromWfd {
			return fmt.Errorf("%w: %s is wfd's own", ErrInvalidEvent, ev.Type)
		}
		return s.checkTaskUpdate(taskUpdateOf(ev))
	}
	if ev.Type == TaskEvent && fromWfd {
		if err := s.checkTaskAnswer(ev); err != nil {
			return err
		}
	}
	if !s.takes(ev.Type) {
		return &EventRefusedError{HandlerID: s.id, Workflow: s.wf.def.Name, Type: ev.Type, Accepted: slices.Sorted(maps.Keys(s.wf.external))}
	}
	if fromWfd {
		return nil // checked where it entered wfd, against its own schema if any
	}
	return s.wf.checkEventSchema(ev)
}

// takes reports whether the handler takes an event of type t from outside
// now: the workflow accepts it at any time, or a step waits for it.
func (s *state) takes(t string) bool {
	if s.wf.external[t] || t == ChildEvent || t == AdmitEvent {
		return true
	}
	for i := range s.steps {
		for _, w := range s.steps[i].waiters {
			if w.eventType == t {
				return true
			}
		}
	}
	return false
}

// checkInitial refuses the events a Start would deliver with the
// creation of the handler whose fresh state is s (StartOptions.Events)
// as SendEvent would refuse them right after the start: a bad type or
// payload, a type the workflow does not accept from outside (nothing
// waits yet, so a type only a WaitFor takes is refused), data its schema
// refuses, more events than the handler may hold. Two events with the
// same idempotency key are ErrInvalidEvent: the second would be dropped
// as a retry of the first, which a caller cannot mean.
func (e *Engine) checkInitial(s *state, evs []InitialEvent) error {
	if len(evs) == 0 {
		return nil
	}
	keys := make(map[string]bool, len(evs))
	all := make([]Event, 0, len(evs)+1)
	all = append(all, Event{Type: StartEvent})
	for i, in := range evs {
		if err := e.CheckEvent(in.Event, SendOptions{}); err != nil {
			return fmt.Errorf("events[%d]: %w", i, err)
		}
		if err := s.accepts(in.Event, false); err != nil {
			return fmt.Errorf("events[%d]: %w", i, err)
		}
		if k := in.IdempotencyKey; k != "" {
			if keys[k] {
				return fmt.Errorf("%w: events[%d]: idempotency key %q is given twice", ErrInvalidEvent, i, k)
			}
			keys[k] = true
		}
		all = append(all, in.Event)
	}
	if n, limit := s.wf.queuedBy(all), e.lim.MaxQueuedEvents; n > limit {
		return fmt.Errorf("%w: the start and its %d events would queue %d events, more than the limit of %d (Limits.MaxQueuedEvents)",
			ErrLimit, len(evs), n, limit)
	}
	return nil
}
