package rpc

// Looking back at a past point of a handler (GetHandlerRequest.at_seq):
// its stream folded up to a record. The stream is the history: the
// checkpoint holds only the latest state, and nothing is re-executed.

import (
	"context"
	"fmt"

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
				return f.at, nil
			}
			var r wfdv1.Record
			if err := proto.Unmarshal(raw.Data, &r); err != nil {
				return nil, fmt.Errorf("%w: record %d of handler %s: %w", persistence.ErrCorrupt, raw.Seq, h.GetHandlerId(), err)
			}
			f.add(&r)
			after = raw.Seq
		}
	}
	return f.at, nil
}

// fold is a HandlerAt being built record by record.
type fold struct {
	at    *wfdv1.HandlerAt
	steps map[string]*wfdv1.StepAt
	// running counts each step's runs in progress by worker slot.
	running map[string]map[uint32]bool
}

func newFold() *fold {
	return &fold{
		at:      &wfdv1.HandlerAt{Status: wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING},
		steps:   map[string]*wfdv1.StepAt{},
		running: map[string]map[uint32]bool{},
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
	}
	s.Running = uint32(len(runs))
}
