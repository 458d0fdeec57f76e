package engine

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wfd-dev/wfd/attrs"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
)

// stateVersion is the format version of statev1.HandlerState this engine writes.
const stateVersion = 1

// state is a handler's state in memory. Only the handler's owner goroutine
// touches it; Snapshot turns it into the protobuf message.
type state struct {
	id        string
	wf        *compiled
	status    Status
	start     Event
	steps     []stepState
	seq       uint64
	nextID    uint64
	createdAt time.Time
	idleSince time.Time
	// more holds what many handlers never have; nil until one is set, so
	// that an idle handler in memory stays small.
	more *stateMore
	// ice holds the events' data while the loop is parked (freeze.go).
	ice *frozen
}

// stateMore is the part of a state that most handlers leave empty.
type stateMore struct {
	kv map[string]*structpb.Value
	// kvBytes is what kv counts against Limits.MaxStoreBytes (kvSize).
	kvBytes     int
	deadline    time.Time
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
	// lastChildren is the copy of children the last change carried
	// (shared with the journal, so never changed).
	lastChildren []string
	// attrs are the handler's search attributes. A set is never changed
	// once made (an update makes a new one), so changes share it.
	// attrsEnc is its stored form, made once per set for the checkpoints.
	attrs    attrs.Set
	attrsEnc []byte
	// slot is the handler's concurrency key, if its workflow limits one.
	slot *slotState
}

// setAttrs makes set the handler's attributes.
func (m *stateMore) setAttrs(set attrs.Set) {
	b, err := attrs.Encode(set)
	if err != nil {
		panic(fmt.Sprintf("engine: attributes that were checked do not encode: %v", err))
	}
	m.attrs, m.attrsEnc = set, b
}

// rare returns the rarely set fields (zero when none is set). The maps and
// slices it returns are the state's own: read them, do not change them.
func (s *state) rare() stateMore {
	if s.more == nil {
		return stateMore{}
	}
	return *s.more
}

// rareMut returns the rarely set fields for changing them.
func (s *state) rareMut() *stateMore {
	if s.more == nil {
		s.more = &stateMore{}
	}
	return s.more
}

// maxEventKeys bounds the idempotency keys a handler remembers.
const maxEventKeys = 1024

// hasKey reports whether an event with this idempotency key was taken.
func (s *state) hasKey(key string) bool {
	_, ok := s.rare().keySet[key]
	return ok
}

// addKey records the idempotency key of an event taken (once), forgetting
// the oldest when the handler remembers maxEventKeys.
func (s *state) addKey(key string) {
	m := s.rareMut()
	if _, ok := m.keySet[key]; ok {
		return
	}
	if m.keySet == nil {
		m.keySet = map[string]struct{}{}
	}
	if len(m.eventKeys) == maxEventKeys {
		delete(m.keySet, m.eventKeys[0])
		m.eventKeys = append(m.eventKeys[:0], m.eventKeys[1:]...)
	}
	m.eventKeys = append(m.eventKeys, key)
	m.keySet[key] = struct{}{}
}

type stepState struct {
	queue     []item
	running   []*execution // their workers are the busy ones
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
	created   time.Time
	// on is set for a wait on a task, a published key or children; most
	// waits are on an event type alone and leave it nil.
	on *waitOn
}

// waitOn is what a wait on something other than an event waits for.
type waitOn struct {
	task     *Task
	life     *TaskLife // the task's claim and comments (tasklife.go)
	key      string
	since    time.Time
	children []string
}

// target returns what the wait is on besides its event type (zero: nothing).
func (w *waiter) target() waitOn {
	if w.on == nil {
		return waitOn{}
	}
	return *w.on
}

func (w *waiter) info(steps []Step) WaiterInfo {
	on := w.target()
	return WaiterInfo{ID: w.id, Step: steps[w.step].Name, EventType: w.eventType, Match: w.match, Deadline: w.deadline,
		Task: on.task, Life: on.life.clone(), EscalateAt: w.escalateAt(), Key: on.key, Since: on.since, Children: on.children, Created: w.created}
}

func newState(wf *compiled, id string, now time.Time) *state {
	s := &state{id: id, wf: wf, status: StatusRunning, createdAt: now, steps: make([]stepState, len(wf.def.Steps))}
	if wf.def.Timeout > 0 {
		s.rareMut().deadline = now.Add(wf.def.Timeout)
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

func eventToProto(e Event) *statev1.Event {
	return &statev1.Event{Id: e.ID, Type: e.Type, Data: e.Data}
}

func eventFromProto(e *statev1.Event) Event {
	return Event{ID: e.GetId(), Type: e.GetType(), Data: e.GetData()}
}

func (it item) toProto() *statev1.WorkItem {
	p := &statev1.WorkItem{Event: eventToProto(it.ev), Attempt: uint32(it.attempt), NotBefore: ts(it.notBefore)}
	if len(it.resolved) > 0 {
		p.Resolved = make(map[string]*statev1.WaitResult, len(it.resolved))
		for k, r := range it.resolved {
			if r.timedOut {
				p.Resolved[k] = &statev1.WaitResult{Result: &statev1.WaitResult_TimedOut{TimedOut: true}}
			} else {
				p.Resolved[k] = &statev1.WaitResult{Result: &statev1.WaitResult_Event{Event: eventToProto(r.ev)}}
			}
		}
	}
	return p
}

func itemFromProto(p *statev1.WorkItem) item {
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

// finishedProto is the part of a finished handler's state that outlives it
// (see Change.Snapshot).
func (s *state) finishedProto() *statev1.HandlerState {
	m := s.rare()
	return &statev1.HandlerState{
		Version:         stateVersion,
		HandlerId:       s.id,
		Workflow:        s.wf.def.Name,
		WorkflowVersion: s.wf.def.Version,
		Status:          statev1.HandlerStatus(s.status),
		Seq:             s.seq,
		CreatedAt:       ts(s.createdAt),
		Error:           m.err,
		CompletedAt:     ts(m.completedAt),
		EventKeys:       slices.Clone(m.eventKeys),
		Parent:          m.parent,
		Children:        slices.Clone(m.children),
		Attributes:      m.encodedAttrs(),
		Slot:            m.slot.toProto(),
	}
}

// encodedAttrs returns the stored form of the attributes (nil for none).
func (m *stateMore) encodedAttrs() []byte { return m.attrsEnc }

// toProto returns the state as a message that shares no mutable memory with
// the live state (payloads are immutable by convention and shared).
func (s *state) toProto() *statev1.HandlerState {
	m := s.rare()
	p := &statev1.HandlerState{
		Version:         stateVersion,
		HandlerId:       s.id,
		Workflow:        s.wf.def.Name,
		WorkflowVersion: s.wf.def.Version,
		Status:          statev1.HandlerStatus(s.status),
		Start:           eventToProto(s.start),
		Seq:             s.seq,
		NextId:          s.nextID,
		CreatedAt:       ts(s.createdAt),
		Deadline:        ts(m.deadline),
		IdleSince:       ts(s.idleSince),
		Result:          m.result,
		Error:           m.err,
		CompletedAt:     ts(m.completedAt),
		EventKeys:       slices.Clone(m.eventKeys),
		Parent:          m.parent,
		Children:        slices.Clone(m.children),
		Attributes:      m.encodedAttrs(),
		Slot:            m.slot.toProto(),
	}
	if len(m.childResults) > 0 {
		p.ChildResults = make(map[string]*statev1.ChildResult, len(m.childResults))
		for id, c := range m.childResults {
			p.ChildResults[id] = &statev1.ChildResult{Status: statev1.HandlerStatus(c.Status), Result: c.Result, Error: c.Error}
		}
	}
	if len(m.kv) > 0 {
		p.Store = maps.Clone(m.kv)
	}
	p.Steps = make([]*statev1.StepState, len(s.steps))
	for i := range s.steps {
		ss := &s.steps[i]
		ps := &statev1.StepState{Name: s.wf.def.Steps[i].Name}
		for _, it := range ss.queue {
			ps.Queue = append(ps.Queue, it.toProto())
		}
		for _, x := range ss.running {
			ps.InProgress = append(ps.InProgress, &statev1.Execution{Id: x.id, Worker: uint32(x.worker), Item: x.item.toProto(), StartedAt: ts(x.startedAt)})
		}
		for _, e := range ss.collected {
			ps.Collected = append(ps.Collected, eventToProto(e))
		}
		for _, w := range ss.waiters {
			on := w.target()
			ps.Waiters = append(ps.Waiters, &statev1.Waiter{Id: w.id, EventType: w.eventType, Match: w.match, Deadline: ts(w.deadline),
				Resume: w.resume.toProto(), Task: taskToProto(on.task, on.life), Key: on.key, Since: ts(on.since), Children: on.children,
				CreatedAt: ts(w.created)})
		}
		p.Steps[i] = ps
	}
	return p
}

// stateFromProto rebuilds a state. Executions that were in progress go back
// to the front of their step's queue: step runs are at least once.
func stateFromProto(wf *compiled, p *statev1.HandlerState) (*state, error) {
	if p.GetVersion() != stateVersion {
		return nil, fmt.Errorf("%w: format version %d, this engine reads %d", ErrInvalidState, p.GetVersion(), stateVersion)
	}
	if p.GetHandlerId() == "" {
		return nil, fmt.Errorf("%w: no handler id", ErrInvalidState)
	}
	s := newState(wf, p.GetHandlerId(), fromTS(p.GetCreatedAt()))
	s.status = Status(p.GetStatus())
	if !s.status.Valid() {
		return nil, fmt.Errorf("%w: status %v", ErrInvalidState, p.GetStatus())
	}
	s.start = eventFromProto(p.GetStart())
	s.seq = p.GetSeq()
	s.nextID = p.GetNextId()
	s.idleSince = fromTS(p.GetIdleSince())
	s.more = nil
	s.rareFromProto(p)
	if b := p.GetAttributes(); len(b) > 0 {
		set, err := attrs.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("%w: attributes: %w", ErrInvalidState, err)
		}
		s.rareMut().attrs, s.rareMut().attrsEnc = set, b
	}
	if err := s.stepsFromProto(p.GetSteps()); err != nil {
		return nil, err
	}
	return s, nil
}

// rareFromProto restores the rarely set fields (stateMore): the outcome,
// the key/value store, the idempotency keys and the handler's parent and
// children. It leaves s.more nil when p sets none of them.
func (s *state) rareFromProto(p *statev1.HandlerState) {
	if p.GetDeadline() != nil || p.GetCompletedAt() != nil || p.GetResult() != nil || p.GetError() != "" {
		m := s.rareMut()
		m.deadline = fromTS(p.GetDeadline())
		m.completedAt = fromTS(p.GetCompletedAt())
		m.result = p.GetResult()
		m.err = p.GetError()
	}
	if len(p.GetStore()) > 0 {
		m := s.rareMut()
		m.kv = maps.Clone(p.GetStore())
		for k, v := range m.kv {
			m.kvBytes += kvSize(k, v)
		}
	}
	for _, k := range p.GetEventKeys() {
		s.addKey(k)
	}
	if p.GetParent() != "" || p.GetChildren() != nil {
		m := s.rareMut()
		m.parent = p.GetParent()
		m.children = p.GetChildren()
	}
	if sl := p.GetSlot(); sl != nil {
		m := s.rareMut()
		m.slot = &slotState{key: sl.GetKey(), queued: sl.GetQueued()}
		for _, e := range sl.GetHeld() {
			m.slot.held = append(m.slot.held, eventFromProto(e))
		}
	}
	for id, c := range p.GetChildResults() {
		m := s.rareMut()
		if m.childResults == nil {
			m.childResults = map[string]ChildResult{}
		}
		m.childResults[id] = ChildResult{Status: Status(c.GetStatus()), Result: c.GetResult(), Error: c.GetError()}
	}
}

// stepsFromProto restores each step's work, matching steps by name: a
// snapshot that names a step the workflow does not have is refused.
func (s *state) stepsFromProto(steps []*statev1.StepState) error {
	def := s.wf.def
	byName := make(map[string]int, len(def.Steps))
	for i, st := range def.Steps {
		byName[st.Name] = i
	}
	for _, ps := range steps {
		i, ok := byName[ps.GetName()]
		if !ok {
			return fmt.Errorf("%w: workflow %q has no step %q", ErrInvalidState, def.Name, ps.GetName())
		}
		s.steps[i].fromProto(i, ps)
	}
	return nil
}

// fromProto adds the work of step (its index) that ps holds: the runs in
// progress, then the queue, the fan-in buffer and the waiters.
func (ss *stepState) fromProto(step int, ps *statev1.StepState) {
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
		ss.waiters = append(ss.waiters, waiterFromProto(step, w))
	}
}

func waiterFromProto(step int, w *statev1.Waiter) *waiter {
	nw := &waiter{
		id: w.GetId(), step: step, eventType: w.GetEventType(), match: w.GetMatch(),
		deadline: fromTS(w.GetDeadline()), resume: itemFromProto(w.GetResume()),
		created: fromTS(w.GetCreatedAt()),
	}
	if w.GetTask() != nil || w.GetKey() != "" || w.GetSince() != nil || w.GetChildren() != nil {
		nw.on = &waitOn{task: taskFromProto(w.GetTask()), life: lifeFromProto(w.GetTask()), key: w.GetKey(), since: fromTS(w.GetSince()), children: w.GetChildren()}
	}
	return nw
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
	idle := &Idle{Since: s.idleSince, Queued: s.queued()}
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
	m := s.rare()
	return Info{
		ID: s.id, Workflow: s.wf.def.Name, WorkflowVersion: s.wf.def.Version, Status: s.status, CreatedAt: s.createdAt, CompletedAt: m.completedAt,
		Idle: s.idleInfo(), Result: m.result, Error: m.err, Seq: s.seq, Attributes: m.attrs, Slot: m.slot.slot(),
	}
}
