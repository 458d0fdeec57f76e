package engine

// The batch the loop gathers for the journal, and what the loop does after
// each burst of messages (settle): start due runs, detect idleness, hand
// the batch to the journal as one Change (or hold it back a little, see
// Options.Linger), and re-arm the timer.

import (
	"slices"
	"time"
)

// record appends a stream record to the batch.
func (r *runner) record(rec Record) {
	r.s.seq++
	rec.Seq = r.s.seq
	rec.Time = r.now
	r.records = append(r.records, rec)
}

// settle runs after every burst of messages. A lost handler (a change of
// it could not be made durable) starts nothing and hands the journal
// nothing more: the loop exits.
func (r *runner) settle() {
	if r.h.lost.Load() {
		r.exit = exitLost
		return
	}
	r.update()
	if r.stopping && r.exit == 0 && r.runningCount() == r.interruptedCount() {
		r.exit = exitStopped
	}
	if !r.linger() {
		r.flush()
	}
	r.resetTimer()
}

// update starts due work and recomputes idleness; it runs after every batch
// of messages, so idle is detected on the change that causes it.
func (r *runner) update() {
	s := r.s
	if s.status != StatusRunning || r.exit != 0 {
		return
	}
	// Leaving idle is recorded before the runs it starts.
	if !s.idleSince.IsZero() && !r.quiescent() {
		s.idleSince = time.Time{}
		r.record(Record{Kind: RecordIdle})
	}
	if !r.stopping {
		r.startDueRuns()
	}
	if !s.idleSince.IsZero() || !r.quiescent() {
		return
	}
	waiters := 0
	for i := range s.steps {
		waiters += len(s.steps[i].waiters)
	}
	if waiters == 0 && !r.wf.wakeable && !s.queued() {
		r.terminate(StatusFailed, nil, ErrStalled.Error())
		return
	}
	s.idleSince = r.now
	r.record(Record{Kind: RecordIdle, Idle: s.buildIdle()})
}

// quiescent: nothing queued and nothing running.
func (r *runner) quiescent() bool {
	for i := range r.s.steps {
		ss := &r.s.steps[i]
		if len(ss.queue) > 0 || len(ss.running) > 0 {
			return false
		}
	}
	return true
}

// linger reports whether to hold this batch back: with Options.Linger set,
// while step runs are in progress and for at most that long, changes gather
// into one journal change, so a quick step's start and end (and the
// acknowledgement of the call that started it) share one commit.
func (r *runner) linger() bool {
	if r.journal == nil || r.exit != 0 || r.stopping || len(r.records) == 0 && len(r.acks) == 0 && !r.created {
		return false
	}
	d, running := r.lingerFor()
	if d <= 0 || !running {
		return false
	}
	if r.lingerSince.IsZero() {
		r.lingerSince = r.now
		r.lingerUntil = time.Time{}
	}
	until := r.lingerSince.Add(d)
	if !r.now.Before(until) {
		return false
	}
	// (Re)armed for when the hold ends: it grows when a run of a step
	// that lingers longer starts meanwhile.
	if !until.Equal(r.lingerUntil) {
		r.lingerUntil = until
		if r.lingerTimer == nil {
			// The timer only wakes the loop, which then flushes.
			r.lingerTimer = time.AfterFunc(until.Sub(r.now), r.h.timerFired)
		} else {
			r.lingerTimer.Reset(until.Sub(r.now))
		}
	}
	return true
}

// lingerFor is how long the batch may be held, and whether a run is in
// progress (nothing to hold for otherwise): Options.Linger, or the longest
// Step.Linger of the steps with a run in progress.
func (r *runner) lingerFor() (d time.Duration, running bool) {
	d = r.h.e.opts.Linger
	for i := range r.s.steps {
		if len(r.s.steps[i].running) > 0 {
			d, running = max(d, r.wf.def.Steps[i].Linger), true
		}
	}
	return d, running
}

func (r *runner) stopLinger() {
	if r.lingerTimer != nil {
		r.lingerTimer.Stop()
	}
}

// flush hands the batch of changes to the journal.
func (r *runner) flush() {
	if r.nothingToFlush() || r.onlyRestored() {
		return
	}
	r.lingerSince = time.Time{}
	if r.journal == nil {
		r.acknowledge()
		return
	}
	if r.h.lost.Load() {
		// Checked again as late as can be: what the journal takes
		// now it must fail (Change.Lost).
		r.exit = exitLost
		return
	}
	c := r.change()
	r.records, r.acks, r.created = nil, nil, false
	r.newWaiters, r.resolved, r.dropped, r.changedTasks, r.childrenChanged = nil, nil, nil, nil, false
	r.h.toJournal()
	r.journal.Append(c)
	c.st = nil
}

// nothingToFlush: the batch holds nothing a journal or a caller needs.
func (r *runner) nothingToFlush() bool {
	return len(r.records) == 0 && len(r.acks) == 0 && !r.created && !r.released && len(r.resolved) == 0 && !r.childrenChanged
}

// onlyRestored: the batch holds only the record of a restore. A restore by
// itself changes nothing durable: its record waits for the next change
// (usually the event that caused the load), so that waking a handler costs
// one commit, not two.
func (r *runner) onlyRestored() bool {
	return r.journal != nil && len(r.records) == 1 && r.records[0].Kind == RecordRestored && len(r.acks) == 0 &&
		!r.created && !r.released && len(r.resolved) == 0 && len(r.newWaiters) == 0 && len(r.dropped) == 0 && !r.childrenChanged
}

// acknowledge ends a batch without a journal: the callers are answered at
// once, and the batch's buffers are kept for the next one.
func (r *runner) acknowledge() {
	for _, a := range r.acks {
		a <- nil
	}
	clear(r.acks)
	r.acks = r.acks[:0]
	clear(r.records)
	r.records = r.records[:0]
	r.created = false
	r.newWaiters, r.resolved, r.dropped, r.changedTasks, r.childrenChanged = nil, nil, nil, nil, false
}

// change makes the journal's Change of the batch. It takes the batch's
// records and acknowledgements, which the caller then lets go.
func (r *runner) change() *Change {
	s := r.s
	m := s.rare()
	c := &Change{
		HandlerID: s.id, Workflow: r.wf.def.Name, WorkflowVersion: r.wf.def.Version, Created: r.created, Released: r.released,
		Status: s.status, Idle: s.idleInfo(), CreatedAt: s.createdAt, UpdatedAt: r.now, CompletedAt: m.completedAt, Deadline: m.deadline,
		Result: m.result, Error: m.err, Records: r.records, st: s, h: r.h, acks: r.acks,
		NewWaiters: r.newWaiters, Resolved: r.resolved, Dropped: r.dropped, ChangedTasks: r.changedTasks, Parent: m.parent,
		Waiters: r.waiters(), Attributes: m.attrs, Slot: m.slot.slot(),
	}
	if r.childrenChanged || (m.lastChildren == nil && len(m.children) > 0) {
		s.rareMut().lastChildren = slices.Clone(m.children)
	}
	c.Children = s.rare().lastChildren
	return c
}

// waiters lists the handler's waiters for a change. It is built for each
// change rather than kept, so an idle handler in memory holds no copy.
func (r *runner) waiters() []WaiterInfo {
	if r.s.status.Terminal() {
		return nil
	}
	var out []WaiterInfo
	for i := range r.s.steps {
		for _, w := range r.s.steps[i].waiters {
			out = append(out, w.info(r.wf.def.Steps))
		}
	}
	return out
}
