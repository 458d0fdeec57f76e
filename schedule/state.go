package schedule

import (
	"slices"
	"time"
)

// State is what the scheduler keeps per schedule between passes. It is
// stored encoded (EncodeState) in persistence.Schedule.State, with
// NextTick beside it, where the store indexes it.
type State struct {
	// LastTick is how far ticks have been processed: every tick at or
	// before it was started, skipped, buffered or recorded as missed. It
	// is the latest tick processed, or a later instant where ticks were
	// passed over without one: the time counting began (NewState), a pass
	// while paused, a resume (ticks while paused are not caught up), a
	// change of the spec, or the end of more missed ticks than a pass
	// counts one by one.
	LastTick time.Time
	// NextTick is when the scheduler must look at the schedule next: the
	// first tick after LastTick or, while a tick is buffered, that tick's
	// time, so that the schedule stays due until the tick starts. Zero
	// when nothing is left (past the spec's end, nothing buffered).
	NextTick time.Time
	// Buffered is the one run OverlapBufferOne keeps waiting for the
	// running ones to end; zero for none.
	Buffered Run
	// Running lists the handlers the schedule started that may still run,
	// oldest first: what the overlap policy counts. A plan adds each run it
	// decides to start (the server starts them before it records the
	// state); the server removes those that ended, or whose handler is
	// gone, before it plans (Prune), and those it could not start (Fail).
	Running []string
	// Recent are the latest outcomes, oldest first, at most MaxRecent.
	Recent []Outcome
	// Counters over the schedule's life. Started counts the runs decided,
	// triggered and backfilled runs included; Failed counts the starts
	// that failed afterwards (Fail), which Started counted too; Missed
	// counts the ticks older than the catch-up window.
	Started, Skipped, Missed, Failed uint64
}

// Limits of a State.
const (
	// MaxRecent is how many outcomes State.Recent keeps.
	MaxRecent = 50
	// MaxRunning is the most runs State.Running holds: a tick that would
	// start one more is skipped, whatever the overlap policy.
	MaxRunning = 100
)

// Run is a run the scheduler decided to start: the tick (or trigger
// instant) it is for and the id of its handler.
type Run struct {
	Tick      time.Time
	HandlerID string
}

// IsZero reports whether r is no run.
func (r Run) IsZero() bool { return r.HandlerID == "" }

// OutcomeKind is what became of a tick.
type OutcomeKind string

// The outcomes of a tick.
const (
	// OutcomeStarted: a run was started for the tick.
	OutcomeStarted OutcomeKind = "started"
	// OutcomeSkipped: the overlap policy skipped the tick.
	OutcomeSkipped OutcomeKind = "skipped"
	// OutcomeMissed: the tick was older than the catch-up window when the
	// scheduler came to it.
	OutcomeMissed OutcomeKind = "missed"
	// OutcomeFailed: the server could not start the tick's run.
	OutcomeFailed OutcomeKind = "failed"
	// OutcomeBuffered: the tick waits for the running runs to end.
	OutcomeBuffered OutcomeKind = "buffered"
	// OutcomeCancelledPrevious: a run was started for the tick after
	// the runs that still ran were cancelled.
	OutcomeCancelledPrevious OutcomeKind = "cancelled_previous"
)

// Outcome is what became of one tick, or, for missed ticks, of the ticks
// one pass found too late (Reason says how many, Tick is the latest).
type Outcome struct {
	Tick      time.Time
	HandlerID string // the run's handler, "" for none (skipped, missed)
	Kind      OutcomeKind
	Reason    string // why it was skipped, missed or failed; what started it
	At        time.Time
}

// NewState returns the state of a schedule created (or whose spec
// changed) at now: ticks count from now on.
func NewState(spec Spec, now time.Time) (State, error) {
	c, err := compile(spec)
	if err != nil {
		return State{}, err
	}
	st := State{LastTick: now.Round(0).UTC()}
	st.NextTick = st.next(c)
	return st, nil
}

// clone returns st with slices of its own, so that a plan never changes
// the state it was given.
func (st State) clone() State {
	st.Running = slices.Clone(st.Running)
	st.Recent = slices.Clone(st.Recent)
	return st
}

// next is the NextTick st has under c.
func (st *State) next(c *compiled) time.Time {
	t := c.next(st.LastTick)
	if !st.Buffered.IsZero() && (t.IsZero() || st.Buffered.Tick.Before(t)) {
		return st.Buffered.Tick
	}
	return t
}

// record appends o to Recent, dropping the oldest beyond MaxRecent, and
// counts it.
func (st *State) record(o Outcome) {
	if len(st.Recent) >= MaxRecent {
		st.Recent = slices.Delete(st.Recent, 0, len(st.Recent)-MaxRecent+1)
	}
	st.Recent = append(st.Recent, o)
	switch o.Kind {
	case OutcomeStarted, OutcomeCancelledPrevious:
		st.Started++
	case OutcomeSkipped:
		st.Skipped++
	case OutcomeFailed:
		st.Failed++
	case OutcomeMissed, OutcomeBuffered:
		// Missed ticks are counted by the pass that finds them (one
		// outcome may stand for many); a buffered tick counts when it
		// starts.
	}
}

// Prune removes from Running the handlers for which running reports
// false (they ended), and returns them: what the server does before each
// plan, so that the overlap policy counts runs that still run.
func (st *State) Prune(running func(handlerID string) bool) []string {
	var ended []string
	st.Running = slices.DeleteFunc(st.Running, func(id string) bool {
		if running(id) {
			return false
		}
		ended = append(ended, id)
		return true
	})
	return ended
}

// Fail records that the run handlerID, decided by a plan, could not be
// started (the workflow is gone, the input is refused): it leaves Running
// and an outcome failed with reason is recorded at at. The server calls
// it on the decision's state, before recording it. It reports whether
// handlerID was running.
func (st *State) Fail(handlerID, reason string, at time.Time) bool {
	i := slices.Index(st.Running, handlerID)
	if i < 0 {
		return false
	}
	st.Running = slices.Delete(st.Running, i, i+1)
	_, tick, _, _ := ParseHandlerID(handlerID)
	st.record(Outcome{Tick: tick, HandlerID: handlerID, Kind: OutcomeFailed, Reason: reason, At: at.UTC()})
	return true
}
