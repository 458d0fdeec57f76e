package engine

// Delivery of events inside a handler: an event goes to the queue of every
// step that accepts its type and resolves the waiters it matches; a
// resolved wait queues its run again. Fan-in (Collect) keeps its buffer
// here too.

import (
	"slices"
	"strconv"
	"time"

	"github.com/wfd-dev/wfd/flow"
	"google.golang.org/protobuf/types/known/structpb"
)

func (r *runner) newID() string {
	r.s.nextID++
	return strconv.FormatUint(r.s.nextID, 10)
}

// deliver routes an event: to every step that accepts its type and to every
// waiter it matches. The stop event ends the handler instead.
func (r *runner) deliver(ev Event) {
	s := r.s
	if ev.ID == "" {
		ev.ID = r.newID()
	}
	if s.queued() || ev.Type == AdmitEvent {
		r.gate(ev)
		return
	}
	if ev.Type == StopEvent {
		r.terminate(StatusCompleted, ev.Data, "")
		return
	}
	if ev.Type == TaskUpdateEvent {
		r.applyTaskUpdate(ev)
		return
	}
	if ev.Type == ChildEvent {
		// Kept whether or not a step waits yet: WaitForChildren reads it.
		id, res := childDone(ev)
		m := s.rareMut()
		if m.childResults == nil {
			m.childResults = map[string]ChildResult{}
		}
		m.childResults[id] = res
	}
	for _, i := range r.wf.accepting[ev.Type] {
		s.steps[i].queue = append(s.steps[i].queue, item{ev: ev, attempt: 1})
	}
	if !s.hasWaiters() {
		return // most events resolve no waiter: this spares the call below
	}
	r.resumeWaiters(waitResult{ev: ev}, func(w *waiter) bool {
		return w.eventType == ev.Type && r.satisfies(w, ev)
	})
}

// resumeWaiters takes every waiter for which resolves holds off its step
// and resumes its run with res.
func (r *runner) resumeWaiters(res waitResult, resolves func(*waiter) bool) {
	for i := range r.s.steps {
		ss := &r.s.steps[i]
		for j := 0; j < len(ss.waiters); {
			w := ss.waiters[j]
			if resolves(w) {
				ss.waiters = slices.Delete(ss.waiters, j, j+1)
				r.resume(w, res)
				continue
			}
			j++
		}
	}
}

// satisfies reports whether ev (of the waiter's type) resolves w: it
// matches, or, for a wait on children, every child has ended.
func (r *runner) satisfies(w *waiter, ev Event) bool {
	children := w.target().children
	if children == nil {
		return ev.Matches(w.match)
	}
	results := r.s.rare().childResults
	for _, c := range children {
		if _, ok := results[c]; !ok {
			return false
		}
	}
	return true
}

// resume queues the parked run again with the wait's result.
func (r *runner) resume(w *waiter, res waitResult) {
	r.resolved = append(r.resolved, Resolution{Waiter: w.info(r.wf.def.Steps), TimedOut: res.timedOut, Event: res.ev})
	if t := w.target().task; t != nil {
		r.recordTaskEnd(t, res)
	}
	it := w.resume
	if it.resolved == nil {
		it.resolved = map[string]waitResult{}
	}
	it.resolved[w.id] = res
	it.notBefore = time.Time{}
	r.s.steps[w.step].queue = append(r.s.steps[w.step].queue, it)
}

// collect adds ev to the step's fan-in buffer and, once the buffer holds an
// event of each of types, takes them out and returns them. A completed set
// is remembered under key until the run finishes, so a re-run of the same
// call gets the same events.
func (r *runner) collect(step int, ev Event, key string, types []string) ([]Event, error) {
	if v, ok := r.s.rare().kv[key]; ok {
		return eventsFromValue(v), nil
	}
	ss := &r.s.steps[step]
	if !slices.ContainsFunc(ss.collected, func(e Event) bool { return e.ID == ev.ID }) {
		ss.collected = append(ss.collected, ev)
	}
	picked := pickTypes(ss.collected, types)
	if picked == nil {
		return nil, nil
	}
	out := make([]Event, len(picked))
	for k, i := range picked {
		out[k] = ss.collected[i]
	}
	// The set is remembered in the store, so it counts against its limit.
	if err := r.s.setKV(key, eventsToValue(out), r.h.e.lim.MaxStoreBytes); err != nil {
		return nil, err
	}
	ss.collected = slices.DeleteFunc(ss.collected, func(e Event) bool {
		return slices.ContainsFunc(out, func(o Event) bool { return o.ID == e.ID })
	})
	return out, nil
}

// pickTypes returns the positions in evs of one event for each entry of
// types (the first unused one of that type), or nil if one is missing.
func pickTypes(evs []Event, types []string) []int {
	used := make([]bool, len(evs))
	picked := make([]int, 0, len(types))
	for _, t := range types {
		found := -1
		for i, e := range evs {
			if !used[i] && e.Type == t {
				found = i
				break
			}
		}
		if found < 0 {
			return nil
		}
		used[found] = true
		picked = append(picked, found)
	}
	return picked
}

// eventsToValue encodes events for the key/value store, where a completed
// collection is remembered until its run finishes.
func eventsToValue(evs []Event) *structpb.Value {
	l := &structpb.ListValue{Values: make([]*structpb.Value, len(evs))}
	for i, e := range evs {
		f := map[string]*structpb.Value{"id": structpb.NewStringValue(e.ID), "type": structpb.NewStringValue(e.Type)}
		if e.Data != nil {
			f["data"] = structpb.NewStructValue(e.Data)
		}
		l.Values[i] = structpb.NewStructValue(&structpb.Struct{Fields: f})
	}
	return structpb.NewListValue(l)
}

func eventsFromValue(v *structpb.Value) []Event {
	vals := v.GetListValue().GetValues()
	out := make([]Event, len(vals))
	for i, ev := range vals {
		f := ev.GetStructValue().GetFields()
		out[i] = Event{ID: f["id"].GetStringValue(), Type: f["type"].GetStringValue(), Data: f["data"].GetStructValue()}
	}
	return out
}

// hasWaiters reports whether a run of the handler is parked in a wait.
func (s *state) hasWaiters() bool {
	for i := range s.steps {
		if len(s.steps[i].waiters) > 0 {
			return true
		}
	}
	return false
}

// recordTaskEnd records how a task's wait resolved: answered, cancelled
// (the TaskEvent says so, with its reason) or expired.
func (r *runner) recordTaskEnd(t *Task, res waitResult) {
	c := &TaskChange{TaskID: t.ID, Title: t.Title, Assignee: t.Assignee, Change: TaskExpired}
	if !res.timedOut {
		a := flow.TaskAnswerOf(res.ev.Data)
		c.Change, c.By = TaskAnswered, a.CompletedBy
		if a.Cancelled {
			c.Change, c.Reason = TaskCancelled, a.Reason
		}
	}
	r.record(Record{Kind: RecordTask, Task: c})
}
