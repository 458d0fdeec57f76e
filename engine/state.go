package engine

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// stateVersion is the format version of wfdv1.HandlerState this engine writes.
const stateVersion = 1

// state is a handler's state in memory. Only the handler's owner goroutine
// touches it; Snapshot turns it into the protobuf message.
type state struct {
	id          string
	wf          *compiled
	status      Status
	start       Event
	steps       []stepState
	kv          map[string]*structpb.Value
	seq         uint64
	nextID      uint64
	createdAt   time.Time
	deadline    time.Time
	idleSince   time.Time
	completedAt time.Time
	result      *structpb.Struct
	err         string
	// eventKeys are the idempotency keys of recent events from outside,
	// oldest first; keySet indexes them.
	eventKeys []string
	keySet    map[string]struct{}

	// parent started this handler as a child; children are the handlers
	// this one started, and childResults how the finished ones ended.
	parent       string
	children     []string
	childResults map[string]ChildResult
}

// maxEventKeys bounds the idempotency keys a handler remembers.
const maxEventKeys = 1024

// hasKey reports whether an event with this idempotency key was taken.
func (s *state) hasKey(key string) bool {
	_, ok := s.keySet[key]
	return ok
}

// seenKey records key and reports whether it was already there.
func (s *state) seenKey(key string) bool {
	if _, ok := s.keySet[key]; ok {
		return true
	}
	if s.keySet == nil {
		s.keySet = map[string]struct{}{}
	}
	if len(s.eventKeys) == maxEventKeys {
		delete(s.keySet, s.eventKeys[0])
		s.eventKeys = append(s.eventKeys[:0], s.eventKeys[1:]...)
	}
	s.eventKeys = append(s.eventKeys, key)
	s.keySet[key] = struct{}{}
	return false
}

type stepState struct {
	queue     []item
	running   []*execution
	busy      []bool // per worker slot
	collected []Event
	waiters   []*waiter
}

// item is one run of a step to do.
type item struct {
	ev        Event
	attempt   int
	notBefore time.Time
	resolved  map[string]waitResult
}

type waitResult struct {
	ev       Event
	timedOut bool
}

type waiter struct {
	id        string
	step      int
	eventType string
	match     *structpb.Struct
	deadline  time.Time
	resume    item
	task      *Task
	key       string
	since     time.Time
	children  []string
	created   time.Time
}

func (w *waiter) info(steps []Step) WaiterInfo {
	return WaiterInfo{ID: w.id, Step: steps[w.step].Name, EventType: w.eventType, Match: w.match, Deadline: w.deadline,
		Task: w.task, Key: w.key, Since: w.since, Children: w.children, Created: w.created}
}

func newState(wf *compiled, id string, now time.Time) *state {
	s := &state{id: id, wf: wf, status: StatusRunning, createdAt: now, steps: make([]stepState, len(wf.def.Steps))}
	for i := range s.steps {
		s.steps[i].busy = make([]bool, wf.def.Steps[i].Workers)
	}
	if wf.def.Timeout > 0 {
		s.deadline = now.Add(wf.def.Timeout)
	}
	return s
}

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func fromTS(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime()
}

func eventToProto(e Event) *wfdv1.Event {
	return &wfdv1.Event{Id: e.ID, Type: e.Type, Data: e.Data}
}

func eventFromProto(e *wfdv1.Event) Event {
	return Event{ID: e.GetId(), Type: e.GetType(), Data: e.GetData()}
}

func (it item) toProto() *wfdv1.WorkItem {
	p := &wfdv1.WorkItem{Event: eventToProto(it.ev), Attempt: uint32(it.attempt), NotBefore: ts(it.notBefore)}
	if len(it.resolved) > 0 {
		p.Resolved = make(map[string]*wfdv1.WaitResult, len(it.resolved))
		for k, r := range it.resolved {
			if r.timedOut {
				p.Resolved[k] = &wfdv1.WaitResult{Result: &wfdv1.WaitResult_TimedOut{TimedOut: true}}
			} else {
				p.Resolved[k] = &wfdv1.WaitResult{Result: &wfdv1.WaitResult_Event{Event: eventToProto(r.ev)}}
			}
		}
	}
	return p
}

func itemFromProto(p *wfdv1.WorkItem) item {
	it := item{ev: eventFromProto(p.GetEvent()), attempt: int(p.GetAttempt()), notBefore: fromTS(p.GetNotBefore())}
	if it.attempt < 1 {
		it.attempt = 1
	}
	if len(p.GetResolved()) > 0 {
		it.resolved = make(map[string]waitResult, len(p.GetResolved()))
		for k, r := range p.GetResolved() {
			if r.GetTimedOut() {
				it.resolved[k] = waitResult{timedOut: true}
			} else {
				it.resolved[k] = waitResult{ev: eventFromProto(r.GetEvent())}
			}
		}
	}
	return it
}

// toProto returns the state as a message that shares no mutable memory with
// the live state (payloads are immutable by convention and shared).
func (s *state) toProto() *wfdv1.HandlerState {
	p := &wfdv1.HandlerState{
		Version:     stateVersion,
		HandlerId:   s.id,
		Workflow:    s.wf.def.Name,
		Status:      wfdv1.HandlerStatus(s.status),
		Start:       eventToProto(s.start),
		Seq:         s.seq,
		NextId:      s.nextID,
		CreatedAt:   ts(s.createdAt),
		Deadline:    ts(s.deadline),
		IdleSince:   ts(s.idleSince),
		Result:      s.result,
		Error:       s.err,
		CompletedAt: ts(s.completedAt),
		EventKeys:   slices.Clone(s.eventKeys),
		Parent:      s.parent,
		Children:    slices.Clone(s.children),
	}
	if len(s.childResults) > 0 {
		p.ChildResults = make(map[string]*wfdv1.ChildResult, len(s.childResults))
		for id, c := range s.childResults {
			p.ChildResults[id] = &wfdv1.ChildResult{Status: wfdv1.HandlerStatus(c.Status), Result: c.Result, Error: c.Error}
		}
	}
	if len(s.kv) > 0 {
		p.Store = maps.Clone(s.kv)
	}
	p.Steps = make([]*wfdv1.StepState, len(s.steps))
	for i := range s.steps {
		ss := &s.steps[i]
		ps := &wfdv1.StepState{Name: s.wf.def.Steps[i].Name}
		for _, it := range ss.queue {
			ps.Queue = append(ps.Queue, it.toProto())
		}
		for _, x := range ss.running {
			ps.InProgress = append(ps.InProgress, &wfdv1.Execution{Id: x.id, Worker: uint32(x.worker), Item: x.item.toProto(), StartedAt: ts(x.startedAt)})
		}
		for _, e := range ss.collected {
			ps.Collected = append(ps.Collected, eventToProto(e))
		}
		for _, w := range ss.waiters {
			ps.Waiters = append(ps.Waiters, &wfdv1.Waiter{Id: w.id, EventType: w.eventType, Match: w.match, Deadline: ts(w.deadline),
				Resume: w.resume.toProto(), Task: w.task.toProto(), Key: w.key, Since: ts(w.since), Children: w.children,
				CreatedAt: ts(w.created)})
		}
		p.Steps[i] = ps
	}
	return p
}

// stateFromProto rebuilds a state. Executions that were in progress go back
// to the front of their step's queue: step runs are at least once.
func stateFromProto(wf *compiled, p *wfdv1.HandlerState) (*state, error) {
	if p.GetVersion() != stateVersion {
		return nil, fmt.Errorf("%w: format version %d, this engine reads %d", ErrInvalidState, p.GetVersion(), stateVersion)
	}
	if p.GetHandlerId() == "" {
		return nil, fmt.Errorf("%w: no handler id", ErrInvalidState)
	}
	s := newState(wf, p.GetHandlerId(), fromTS(p.GetCreatedAt()))
	s.status = Status(p.GetStatus())
	if s.status < StatusRunning || s.status > StatusCancelled {
		return nil, fmt.Errorf("%w: status %v", ErrInvalidState, p.GetStatus())
	}
	s.start = eventFromProto(p.GetStart())
	s.seq = p.GetSeq()
	s.nextID = p.GetNextId()
	s.deadline = fromTS(p.GetDeadline())
	s.idleSince = fromTS(p.GetIdleSince())
	s.completedAt = fromTS(p.GetCompletedAt())
	s.result = p.GetResult()
	s.err = p.GetError()
	if len(p.GetStore()) > 0 {
		s.kv = maps.Clone(p.GetStore())
	}
	for _, k := range p.GetEventKeys() {
		s.seenKey(k)
	}
	s.parent = p.GetParent()
	s.children = p.GetChildren()
	for id, c := range p.GetChildResults() {
		if s.childResults == nil {
			s.childResults = map[string]ChildResult{}
		}
		s.childResults[id] = ChildResult{Status: Status(c.GetStatus()), Result: c.GetResult(), Error: c.GetError()}
	}
	byName := make(map[string]int, len(wf.def.Steps))
	for i, st := range wf.def.Steps {
		byName[st.Name] = i
	}
	for _, ps := range p.GetSteps() {
		i, ok := byName[ps.GetName()]
		if !ok {
			return nil, fmt.Errorf("%w: workflow %q has no step %q", ErrInvalidState, wf.def.Name, ps.GetName())
		}
		ss := &s.steps[i]
		for _, x := range ps.GetInProgress() {
			ss.queue = append(ss.queue, itemFromProto(x.GetItem()))
		}
		for _, q := range ps.GetQueue() {
			ss.queue = append(ss.queue, itemFromProto(q))
		}
		for _, e := range ps.GetCollected() {
			ss.collected = append(ss.collected, eventFromProto(e))
		}
		for _, w := range ps.GetWaiters() {
			ss.waiters = append(ss.waiters, &waiter{
				id: w.GetId(), step: i, eventType: w.GetEventType(), match: w.GetMatch(),
				deadline: fromTS(w.GetDeadline()), resume: itemFromProto(w.GetResume()),
				task: taskFromProto(w.GetTask()), key: w.GetKey(), since: fromTS(w.GetSince()), children: w.GetChildren(),
				created: fromTS(w.GetCreatedAt()),
			})
		}
	}
	return s, nil
}

// idleInfo describes what the handler waits for, if it is idle. It is
// built when asked, not kept, so an idle handler in memory stays small.
func (s *state) idleInfo() *Idle {
	if s.idleSince.IsZero() {
		return nil
	}
	return s.buildIdle()
}

// buildIdle describes what the idle handler waits for.
func (s *state) buildIdle() *Idle {
	idle := &Idle{Since: s.idleSince}
	for i := range s.steps {
		for _, w := range s.steps[i].waiters {
			idle.Waiters = append(idle.Waiters, w.info(s.wf.def.Steps))
		}
	}
	for _, t := range s.wf.def.External {
		if len(s.wf.accepting[t]) > 0 {
			idle.External = append(idle.External, t)
		}
	}
	return idle
}

func (s *state) info() Info {
	return Info{
		ID: s.id, Workflow: s.wf.def.Name, Status: s.status, CreatedAt: s.createdAt, CompletedAt: s.completedAt,
		Idle: s.idleInfo(), Result: s.result, Error: s.err, Seq: s.seq,
	}
}
