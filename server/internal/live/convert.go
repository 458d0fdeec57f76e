package live

import (
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/payload"
	"github.com/wfd-dev/wfd/internal/schema"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/schedule"
)

// RecordToProto turns an engine record into its wire form.
// BlockedOnWorker is what a proxy run waiting for a worker reports to
// the engine (StepContext.Blocked), followed by "@" and the version the
// worker must serve (BlockedOnWorkerOf): its stream shows
// RunWaitingForWorker.
const BlockedOnWorker = "worker"

// BlockedOnWorkerOf is what a run waiting for a worker serving version
// reports; noneConnected: no connected worker serves it at all.
func BlockedOnWorkerOf(version string, noneConnected bool) string {
	if noneConnected {
		return BlockedOnWorker + ":none@" + version
	}
	return BlockedOnWorker + "@" + version
}

// BlockedOnLostWorker is what a run whose worker (named worker) was lost
// mid-run reports before it is dispatched again.
func BlockedOnLostWorker(version, worker string) string {
	return BlockedOnWorker + ":lost=" + worker + "@" + version
}

// runWaiting reads what BlockedOnWorkerOf and BlockedOnLostWorker wrote
// (on is "" once a worker took the run); ok is false for anything else.
func runWaiting(b *engine.Blocked) (*wfdv1.RunWaitingForWorker, bool) {
	w := &wfdv1.RunWaitingForWorker{Step: b.Step, Attempt: uint32(b.Attempt)}
	if b.On == "" {
		return w, true
	}
	i := strings.LastIndexByte(b.On, '@')
	if i < 0 {
		return nil, false
	}
	kind, version := b.On[:i], b.On[i+1:]
	w.WorkflowVersion = version
	switch {
	case kind == BlockedOnWorker:
		w.Waiting = true
	case kind == BlockedOnWorker+":none":
		w.Waiting, w.NoneConnected = true, true
	case strings.HasPrefix(kind, BlockedOnWorker+":lost="):
		w.LostWorker = strings.TrimPrefix(kind, BlockedOnWorker+":lost=")
	default:
		return nil, false
	}
	return w, true
}

func RecordToProto(r *engine.Record) *wfdv1.Record {
	p := &wfdv1.Record{Seq: r.Seq, Time: timestamppb.New(r.Time)}
	switch r.Kind {
	case engine.RecordStepState:
		c := &r.Step
		p.Kind = &wfdv1.Record_StepStateChanged{StepStateChanged: &wfdv1.StepStateChanged{
			Step: c.Step, Worker: uint32(c.Worker), Running: c.Running, InputEventType: c.InputType,
			EmittedEventTypes: c.Emitted, Attempt: uint32(c.Attempt), Waiting: c.Waiting, Error: c.Error,
		}}
	case engine.RecordEvent:
		p.Kind = &wfdv1.Record_EventWritten{EventWritten: &wfdv1.Event{Id: r.Event.ID, Type: r.Event.Type, Data: r.Event.Data}}
	case engine.RecordIdle:
		p.Kind = &wfdv1.Record_IdleChanged{IdleChanged: &wfdv1.IdleChanged{Idle: r.Idle != nil, Info: IdleToProto(r.Idle)}}
	case engine.RecordTerminal:
		p.Kind = &wfdv1.Record_HandlerFinished{HandlerFinished: &wfdv1.HandlerFinished{
			Status: wfdv1.HandlerStatus(r.Status), Result: r.Result, Error: r.Error,
		}}
	case engine.RecordReleased:
		p.Kind = &wfdv1.Record_HandlerReleased{HandlerReleased: &wfdv1.HandlerReleased{}}
	case engine.RecordRestored:
		p.Kind = &wfdv1.Record_HandlerRestored{HandlerRestored: &wfdv1.HandlerRestored{}}
	case engine.RecordUpgraded:
		if u := r.Upgraded; u != nil {
			p.Kind = &wfdv1.Record_HandlerUpgraded{HandlerUpgraded: &wfdv1.HandlerUpgraded{FromVersion: u.From, ToVersion: u.To}}
		}
	case engine.RecordAdmitted:
		p.Kind = &wfdv1.Record_HandlerAdmitted{HandlerAdmitted: &wfdv1.HandlerAdmitted{}}
	case engine.RecordTask:
		if t := r.Task; t != nil {
			p.Kind = &wfdv1.Record_TaskChanged{TaskChanged: &wfdv1.TaskChanged{TaskId: t.TaskID, Title: t.Title, Assignee: t.Assignee,
				Change: wfdv1.TaskChange(t.Change), By: t.By, Reason: t.Reason, To: t.To, Text: t.Text}}
		}
	case engine.RecordMemo:
		if m := r.Memo; m != nil {
			p.Kind = &wfdv1.Record_MemoSet{MemoSet: &wfdv1.MemoSet{Step: m.Step, Key: m.Key, Value: m.Value}}
		}
	case engine.RecordBlocked:
		b := r.Blocked
		if b == nil {
			break
		}
		if w, ok := runWaiting(b); ok {
			p.Kind = &wfdv1.Record_RunWaitingForWorker{RunWaitingForWorker: w}
		}
	}
	return p
}

func IdleToProto(i *engine.Idle) *wfdv1.IdleInfo {
	if i == nil {
		return nil
	}
	p := &wfdv1.IdleInfo{Since: timestamppb.New(i.Since), ExternalEventTypes: i.External, Queued: i.Queued}
	for _, w := range i.Waiters {
		p.Waiters = append(p.Waiters, WaiterToProto(&w))
	}
	return p
}

// ChildrenKey indexes, in the store, the waiters of parents waiting for
// children, so that start-up can check on them.
const ChildrenKey = "wfd.children"

// MetaFromChange is the store's metadata for a handler after an engine change.
func MetaFromChange(c *engine.Change, residency persistence.Residency) (persistence.Handler, error) {
	h := persistence.Handler{
		ID: c.HandlerID, Workflow: c.Workflow, WorkflowVersion: c.WorkflowVersion, Status: c.Status, Residency: residency,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, CompletedAt: c.CompletedAt, Error: c.Error, Parent: c.Parent,
		Children: c.Children, Attributes: c.Attributes,
	}
	if c.Slot != nil {
		h.Slot = &persistence.HandlerSlot{Key: c.Slot.Key, Queued: c.Slot.Queued}
	}
	if c.Result != nil {
		b, err := proto.Marshal(c.Result)
		if err != nil {
			return h, err
		}
		h.Result = b
	}
	for _, w := range c.Waiters {
		// The API view of the waiter rides in Match, opaque to the store.
		b, err := proto.Marshal(WaiterToProto(&w))
		if err != nil {
			return h, err
		}
		// A task's escalation is a timer too: the handler is loaded for it.
		pw := persistence.Waiter{ID: w.ID, Step: w.Step, EventType: w.EventType, Deadline: earliest(w.Deadline, w.EscalateAt), Match: b, Key: w.Key}
		if w.Children != nil {
			pw.Key = ChildrenKey
		}
		h.Waiters = append(h.Waiters, pw)
	}
	if c.Idle != nil {
		h.IdleSince = c.Idle.Since
		h.External = c.Idle.External
	}
	if c.Status == engine.StatusRunning {
		// Indexed as a timer, so that a released handler wakes for it.
		h.Deadline = c.Deadline
	}
	return h, nil
}

func WaiterToProto(w *engine.WaiterInfo) *wfdv1.WaiterInfo {
	p := &wfdv1.WaiterInfo{WaiterId: w.ID, Step: w.Step, EventType: w.EventType, Match: w.Match, Key: w.Key, Children: w.Children}
	if !w.Deadline.IsZero() {
		p.Deadline = timestamppb.New(w.Deadline)
	}
	if t := w.Task; t != nil {
		p.Task = &wfdv1.HumanTask{TaskId: t.ID, Title: t.Title, Description: t.Description, AnswerSchema: t.Schema, Assignee: t.Assignee,
			Input: t.Input, InputSchema: t.InputSchema}
	}
	return p
}

// HandlerToProto is the API view of stored metadata.
func HandlerToProto(h *persistence.Handler) *wfdv1.Handler {
	p := &wfdv1.Handler{
		HandlerId: h.ID, Workflow: h.Workflow, WorkflowVersion: h.WorkflowVersion, Status: wfdv1.HandlerStatus(h.Status),
		Error: h.Error, LastSeq: h.LastSeq, ParentId: h.Parent, Children: h.Children,
		CreatedAt: timestamppb.New(h.CreatedAt), UpdatedAt: timestamppb.New(h.UpdatedAt),
	}
	if len(h.Attributes) > 0 {
		p.Attributes = h.Attributes.Struct()
	}
	scheduledBy(p)
	if h.Status == persistence.StatusRunning {
		// Residency is about running handlers; a finished one has none.
		p.Residency = wfdv1.Residency(h.Residency)
	}
	if !h.CompletedAt.IsZero() {
		p.CompletedAt = timestamppb.New(h.CompletedAt)
	}
	if h.Status == persistence.StatusCompleted {
		// An empty result is an empty object, as on the stream.
		var s structpb.Struct
		if proto.Unmarshal(h.Result, &s) == nil {
			p.Result = payload.Sanitize(&s)
		}
	}
	if !h.IdleSince.IsZero() {
		p.Idle = &wfdv1.IdleInfo{Since: timestamppb.New(h.IdleSince), ExternalEventTypes: h.External}
		for _, w := range h.Waiters {
			wi := &wfdv1.WaiterInfo{}
			if proto.Unmarshal(w.Match, wi) != nil {
				wi = &wfdv1.WaiterInfo{WaiterId: w.ID, Step: w.Step, EventType: w.EventType}
			}
			p.Idle.Waiters = append(p.Idle.Waiters, CleanWaiter(wi))
		}
	}
	if h.Slot != nil {
		setSlot(p, h.Slot.Key, h.Slot.Queued)
	}
	return p
}

// WorkflowToProto describes a registered workflow: its schemas as
// Structs, and every event type it takes from outside, external or
// declared, sorted by type.
func WorkflowToProto(w *engine.Workflow) *wfdv1.Workflow {
	p := &wfdv1.Workflow{Name: w.Name, Version: w.Version, Description: w.Description, ExternalEventTypes: w.External,
		InputSchema: SchemaStruct(w.InputSchema)}
	if len(w.Attributes) > 0 {
		p.SearchAttributes = w.Attributes.Declarations()
	}
	p.Concurrency = ConcurrencyToProto(w.Concurrency)
	for _, s := range w.Steps {
		p.Steps = append(p.Steps, s.Name)
	}
	types := map[string]*wfdv1.EventType{}
	for _, t := range w.External {
		types[t] = &wfdv1.EventType{Type: t, External: true}
	}
	for _, et := range w.Events {
		t := types[et.Type]
		if t == nil {
			t = &wfdv1.EventType{Type: et.Type}
			types[et.Type] = t
		}
		t.Description, t.Schema = et.Description, SchemaStruct(et.Schema)
	}
	for _, t := range slices.Sorted(maps.Keys(types)) {
		p.EventTypes = append(p.EventTypes, types[t])
	}
	return p
}

// SchemaStruct is a registered schema as the API carries it (nil for
// none). Register made sure that it converts.
func SchemaStruct(raw []byte) *structpb.Struct {
	if len(raw) == 0 {
		return nil
	}
	st, err := schema.Struct(raw)
	if err != nil {
		return nil
	}
	return st
}

// Output is sanitized (payload.Sanitize) wherever the service answers with
// stored payloads: handlers, stream records, tasks. A store may hold what
// JSON cannot (NaN, ±Infinity, a value with no kind), written before
// payloads were checked or by another program, and one such value must not
// make GetHandler, ListHandlers or StreamEvents fail for Connect JSON
// clients. Non-finite numbers become the strings "NaN", "Infinity" and
// "-Infinity", kind-less values null. What needs no change is returned as
// it is; what does is copied, since live records are shared by every
// subscriber of a stream.

// CleanRecord returns r with every payload it holds sanitized.
func CleanRecord(r *wfdv1.Record) *wfdv1.Record {
	switch k := r.GetKind().(type) {
	case *wfdv1.Record_EventWritten:
		if d := payload.Sanitize(k.EventWritten.GetData()); d != k.EventWritten.GetData() {
			c := proto.Clone(r).(*wfdv1.Record)
			c.GetEventWritten().Data = d
			return c
		}
	case *wfdv1.Record_HandlerFinished:
		if res := payload.Sanitize(k.HandlerFinished.GetResult()); res != k.HandlerFinished.GetResult() {
			c := proto.Clone(r).(*wfdv1.Record)
			c.GetHandlerFinished().Result = res
			return c
		}
	case *wfdv1.Record_IdleChanged:
		if info := CleanIdle(k.IdleChanged.GetInfo()); info != k.IdleChanged.GetInfo() {
			c := proto.Clone(r).(*wfdv1.Record)
			c.GetIdleChanged().Info = info
			return c
		}
	}
	return r
}

func CleanIdle(i *wfdv1.IdleInfo) *wfdv1.IdleInfo {
	var out *wfdv1.IdleInfo
	for j, w := range i.GetWaiters() {
		if cw := CleanWaiter(w); cw != w {
			if out == nil {
				out = proto.Clone(i).(*wfdv1.IdleInfo)
			}
			out.Waiters[j] = cw
		}
	}
	if out == nil {
		return i
	}
	return out
}

func CleanWaiter(w *wfdv1.WaiterInfo) *wfdv1.WaiterInfo {
	m, schema := payload.Sanitize(w.GetMatch()), payload.Sanitize(w.GetTask().GetAnswerSchema())
	if m == w.GetMatch() && schema == w.GetTask().GetAnswerSchema() {
		return w
	}
	c := proto.Clone(w).(*wfdv1.WaiterInfo)
	c.Match = m
	if c.Task != nil {
		c.Task.AnswerSchema = schema
	}
	return c
}

// InfoToProto is the API view of a handler from the engine, for answering
// a call whose change is durable when the store cannot be read back.
func InfoToProto(i engine.Info) *wfdv1.Handler {
	p := &wfdv1.Handler{
		HandlerId: i.ID, Workflow: i.Workflow, WorkflowVersion: i.WorkflowVersion, Status: wfdv1.HandlerStatus(i.Status), Error: i.Error, LastSeq: i.Seq,
		CreatedAt: timestamppb.New(i.CreatedAt), Result: payload.Sanitize(i.Result), Idle: CleanIdle(IdleToProto(i.Idle)),
	}
	if len(i.Attributes) > 0 {
		p.Attributes = i.Attributes.Struct()
	}
	scheduledBy(p)
	if i.Status == engine.StatusRunning {
		p.Residency = wfdv1.Residency_RESIDENCY_ACTIVE
	}
	if i.Slot != nil {
		setSlot(p, i.Slot.Key, i.Slot.Queued)
	}
	if !i.CompletedAt.IsZero() {
		p.CompletedAt = timestamppb.New(i.CompletedAt)
	}
	if i.Status == engine.StatusCompleted && p.Result == nil {
		p.Result = &structpb.Struct{}
	}
	return p
}

// scheduledBy names the schedule and tick that started p, read from its
// id (schedule.HandlerID, schedule.TriggerHandlerID).
func scheduledBy(p *wfdv1.Handler) {
	if id, tick, _, ok := schedule.ParseHandlerID(p.GetHandlerId()); ok {
		p.ScheduleId, p.ScheduleTick = id, timestamppb.New(tick)
	}
}

// setSlot sets p's concurrency key; a running handler that waits in its
// key's queue is QUEUED.
func setSlot(p *wfdv1.Handler, key string, queued bool) {
	p.Slot = &wfdv1.HandlerSlot{Key: key, Queued: queued}
	if queued && p.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
		p.Status = wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED
		if p.Idle != nil {
			p.Idle.Queued = true
		}
	}
}

// ConcurrencyToProto is the API's Concurrency (nil for none).
func ConcurrencyToProto(c *engine.Concurrency) *wfdv1.Concurrency {
	if !c.Limited() {
		return nil
	}
	p := &wfdv1.Concurrency{Key: c.Key, Max: uint32(c.Max), Rate: uint32(c.Rate), Refuse: c.Refuse}
	if c.Per > 0 {
		p.Per = durationpb.New(c.Per)
	}
	return p
}

// ConcurrencyFromProto is the engine's Concurrency of the API's (nil for
// none); engine.Register validates it.
func ConcurrencyFromProto(p *wfdv1.Concurrency) *engine.Concurrency {
	if p == nil {
		return nil
	}
	return &engine.Concurrency{Key: p.GetKey(), Max: int(p.GetMax()), Rate: int(p.GetRate()), Per: p.GetPer().AsDuration(), Refuse: p.GetRefuse()}
}

// earliest is the earlier of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
