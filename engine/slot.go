package engine

// Concurrency keys, inside a handler: a handler started queued (its key
// has no free slot) holds every event it takes, the start event first,
// until the event that admits it, and counts as idle meanwhile (it waits
// for something outside it), so that it can leave memory. Which handlers
// hold a key's slots is the host's to decide (a server keeps it in its
// store): the engine only holds and lets go.

import (
	"fmt"

	"github.com/wfd-dev/wfd/flow"
	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
)

// Concurrency is a workflow's concurrency limit (flow.Concurrency).
type Concurrency = flow.Concurrency

// AdmitEvent is the type of the event that admits a queued handler: its
// held events are delivered, in order, and it runs. Only wfd sends it; a
// handler that is not queued ignores it.
const AdmitEvent = "wfd.admit"

// Slot is a handler's place in its workflow's concurrency key: Key, and
// whether it still waits in the key's queue.
type Slot struct {
	Key    string
	Queued bool
}

// slotState is Slot in a handler's state, with the events it holds while
// queued.
type slotState struct {
	key    string
	queued bool
	held   []Event
}

func (sl *slotState) slot() *Slot {
	if sl == nil {
		return nil
	}
	return &Slot{Key: sl.key, Queued: sl.queued}
}

// queued reports whether the handler waits for a slot.
func (s *state) queued() bool {
	m := s.more
	return m != nil && m.slot != nil && m.slot.queued
}

// gate takes an event of a queued handler, or AdmitEvent: it holds the
// event, or admits the handler (AdmitEvent to one admitted already, or
// never queued, changes nothing).
func (r *runner) gate(ev Event) {
	if !r.s.queued() {
		return
	}
	sl := r.s.more.slot
	if ev.Type != AdmitEvent {
		sl.held = append(sl.held, ev)
		return
	}
	sl.queued = false
	held := sl.held
	sl.held = nil
	r.record(Record{Kind: RecordAdmitted})
	for _, h := range held {
		r.deliver(h)
	}
}

// ConcurrencyOf returns the concurrency limits that apply to a handler
// of workflow starting on version ("": the current one): keyed is the
// version's (its Key names the handler's key), limit the current
// version's (what the key allows now). Both are nil when the workflow
// limits nothing.
func (e *Engine) ConcurrencyOf(workflow, version string) (keyed, limit *Concurrency, err error) {
	c, err := e.lookup(workflow, version)
	if err != nil || !c.def.Concurrency.Limited() {
		return nil, nil, err // every start of most workflows: one look-up
	}
	keyed, limit = c.def.Concurrency, c.def.Concurrency
	if version != "" {
		cur, err := e.lookup(workflow, "")
		if err != nil {
			return nil, nil, err
		}
		limit = cur.def.Concurrency
		if !limit.Limited() {
			// The current version limits nothing: the key stays, unlimited.
			limit = &Concurrency{}
		}
	}
	return keyed, limit, nil
}

// checkSlot refuses a start's Slot on a workflow without a limit.
func checkSlot(c *compiled, sl *Slot) error {
	if sl != nil && !c.def.Concurrency.Limited() && sl.Queued {
		return fmt.Errorf("%w: workflow %q limits no concurrency: a handler of it cannot start queued", ErrInvalidInput, c.def.Name)
	}
	return nil
}

func (sl *slotState) toProto() *statev1.Slot {
	if sl == nil {
		return nil
	}
	p := &statev1.Slot{Key: sl.key, Queued: sl.queued}
	for _, e := range sl.held {
		p.Held = append(p.Held, eventToProto(e))
	}
	return p
}
