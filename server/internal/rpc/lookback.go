package rpc

// Looking back at a past point of a handler (GetHandlerRequest.at_seq):
// its stream folded up to a record. The stream is the history: the
// checkpoint holds only the latest state, and nothing is re-executed.

import (
	"context"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/persistence"
)

const (
	// lookbackPage is how many records a look back reads at a time.
	lookbackPage = 1000
	// lookbackWritten is how many written events HandlerAt keeps.
	lookbackWritten = 100
)

// handlerAt folds h's stream up to record seq.
func (s *Service) handlerAt(ctx context.Context, h *wfdv1.Handler, seq uint64) (*wfdv1.HandlerAt, error) {
	f := newFold()
	for after := uint64(0); after < seq; {
		recs, err := s.store.ReadRecords(ctx, h.GetHandlerId(), after, lookbackPage)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			break
		}
		for _, raw := range recs {
			if raw.Seq > seq {
				return s.withAnswers(ctx, f.at), nil
			}
			var r wfdv1.Record
			if err := proto.Unmarshal(raw.Data, &r); err != nil {
				return nil, fmt.Errorf("%w: record %d of handler %s: %w", persistence.ErrCorrupt, raw.Seq, h.GetHandlerId(), err)
			}
			f.add(&r)
			after = raw.Seq
		}
	}
	return s.withAnswers(ctx, f.at), nil
}

// withAnswers fills in the answers of the tasks answered by then, from
// the tasks themselves (an answer never changes once given); a task
// that cannot be read keeps none.
func (s *Service) withAnswers(ctx context.Context, at *wfdv1.HandlerAt) *wfdv1.HandlerAt {
	for _, t := range at.Tasks {
		if t.GetChange() != wfdv1.TaskChange_TASK_CHANGE_ANSWERED {
			continue
		}
		if task, err := s.store.GetTask(ctx, t.GetTaskId()); err == nil {
			t.Answer = jsonStruct(task.Answer)
		}
	}
	return at
}

// fold is a HandlerAt being built record by record.
type fold struct {
	at    *wfdv1.HandlerAt
	steps map[string]*wfdv1.StepAt
	// running counts each step's runs in progress by worker slot.
	running map[string]map[uint32]bool
	// tasks are at.Tasks by id.
	tasks map[string]*wfdv1.TaskAt
}

func newFold() *fold {
	return &fold{
		at:      &wfdv1.HandlerAt{Status: wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING},
		steps:   map[string]*wfdv1.StepAt{},
		running: map[string]map[uint32]bool{},
		tasks:   map[string]*wfdv1.TaskAt{},
	}
}

// add applies record r.
func (f *fold) add(r *wfdv1.Record) {
	at := f.at
	at.Seq, at.Time = r.GetSeq(), r.GetTime()
	switch k := r.GetKind().(type) {
	case *wfdv1.Record_StepStateChanged:
		f.step(k.StepStateChanged)
	case *wfdv1.Record_EventWritten:
		at.WrittenTotal++
		at.Written = append(at.Written, k.EventWritten)
		if len(at.Written) > lookbackWritten {
			at.Written = at.Written[len(at.Written)-lookbackWritten:]
		}
	case *wfdv1.Record_IdleChanged:
		at.Idle = nil
		if k.IdleChanged.GetIdle() {
			at.Idle = k.IdleChanged.GetInfo()
			if at.Idle == nil {
				at.Idle = &wfdv1.IdleInfo{}
			}
			if at.Idle.GetSince() == nil {
				at.Idle.Since = r.GetTime()
			}
		}
		if at.Idle.GetQueued() {
			// Idle in its concurrency key's queue: not admitted yet.
			at.Status = wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED
		}
	case *wfdv1.Record_HandlerAdmitted:
		at.Status = wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING
	case *wfdv1.Record_HandlerFinished:
		at.Status, at.Result, at.Error, at.Idle = k.HandlerFinished.GetStatus(), k.HandlerFinished.GetResult(), k.HandlerFinished.GetError(), nil
	case *wfdv1.Record_HandlerReleased:
		at.Released = true
	case *wfdv1.Record_HandlerRestored:
		at.Released = false
	case *wfdv1.Record_HandlerUpgraded:
		at.WorkflowVersion = k.HandlerUpgraded.GetToVersion()
	case *wfdv1.Record_MemoSet:
		f.memo(k.MemoSet)
	case *wfdv1.Record_TaskChanged:
		f.task(k.TaskChanged)
	}
}

// memo keeps a step run's memo (the latest under its step and key).
func (f *fold) memo(m *wfdv1.MemoSet) {
	for i, old := range f.at.Memos {
		if old.GetStep() == m.GetStep() && old.GetKey() == m.GetKey() {
			f.at.Memos[i] = m
			return
		}
	}
	f.at.Memos = append(f.at.Memos, m)
}

// task applies a task's change.
func (f *fold) task(c *wfdv1.TaskChanged) {
	t := f.tasks[c.GetTaskId()]
	if t == nil {
		t = &wfdv1.TaskAt{TaskId: c.GetTaskId(), Title: c.GetTitle(), Assignee: c.GetAssignee()}
		f.tasks[c.GetTaskId()] = t
		f.at.Tasks = append(f.at.Tasks, t)
	}
	t.Change, t.By = c.GetChange(), c.GetBy()
	switch c.GetChange() {
	case wfdv1.TaskChange_TASK_CHANGE_CLAIMED:
		t.ClaimedBy = c.GetBy()
	case wfdv1.TaskChange_TASK_CHANGE_UNCLAIMED:
		t.ClaimedBy = ""
	case wfdv1.TaskChange_TASK_CHANGE_REASSIGNED, wfdv1.TaskChange_TASK_CHANGE_ESCALATED:
		if c.GetTo() != "" {
			t.Assignee, t.ClaimedBy = c.GetTo(), ""
		}
	case wfdv1.TaskChange_TASK_CHANGE_COMMENTED:
		t.Comments++
	}
}

// step applies a step run's start or end.
func (f *fold) step(c *wfdv1.StepStateChanged) {
	s := f.steps[c.GetStep()]
	if s == nil {
		s = &wfdv1.StepAt{Step: c.GetStep()}
		f.steps[c.GetStep()] = s
		f.running[c.GetStep()] = map[uint32]bool{}
		f.at.Steps = append(f.at.Steps, s)
	}
	runs := f.running[c.GetStep()]
	if c.GetRunning() {
		runs[c.GetWorker()] = true
		s.Attempt, s.InputEventType = c.GetAttempt(), c.GetInputEventType()
	} else {
		delete(runs, c.GetWorker())
		s.Ended++
		s.EmittedEventTypes, s.Error, s.Waiting = c.GetEmittedEventTypes(), c.GetError(), c.GetWaiting()
		if !c.GetWaiting() && len(runs) == 0 {
			// The run finished: its memos are gone (the engine drops them).
			f.at.Memos = slices.DeleteFunc(f.at.Memos, func(m *wfdv1.MemoSet) bool { return m.GetStep() == c.GetStep() })
		}
	}
	s.Running = uint32(len(runs))
}
