package engine

// A handler's timers: one time.AfterFunc, armed for the earliest of the
// whole-run deadline, the waiters' deadlines and the retries' backoffs,
// which posts a message to the loop; the loop then fires what is due.

import (
	"context"
	"fmt"
	"time"
)

// fireTimers acts on what is due at r.now: the whole-run deadline fails the
// handler, and a waiter whose deadline passed resumes its run timed out.
// Retries in backoff need nothing here: startDueRuns starts them once due.
func (r *runner) fireTimers() {
	if d := r.s.rare().deadline; !d.IsZero() && !d.After(r.now) {
		r.terminate(StatusFailed, nil, fmt.Sprintf("%v after %v", ErrWorkflowTimeout, r.wf.def.Timeout))
		return
	}
	r.escalateDue()
	r.resumeWaiters(waitResult{timedOut: true}, func(w *waiter) bool {
		return !w.deadline.IsZero() && !w.deadline.After(r.now)
	})
}

// resetTimer arms the handler's timer for its next deadline, or drops it
// when there is none (or the loop exits).
func (r *runner) resetTimer() {
	var next time.Time
	if r.exit == 0 {
		next = r.nextDeadline()
	}
	r.h.armTimer(next)
}

// nextDeadline is the earliest of the whole-run deadline, the waiters'
// deadlines and the queued retries' backoffs (zero: none). It looks at the
// steps only when lc.timed says one may be pending, and clears lc.timed
// when none is.
func (r *runner) nextDeadline() time.Time {
	next := r.s.rare().deadline
	lc := &r.h.lc
	if !lc.timed {
		return next
	}
	lc.timed = false
	for i := range r.s.steps {
		ss := &r.s.steps[i]
		for _, w := range ss.waiters {
			if !w.deadline.IsZero() {
				lc.timed = true
				next = earliest(next, w.deadline)
			}
			if at := w.escalateAt(); !at.IsZero() {
				lc.timed = true
				next = earliest(next, at)
			}
		}
		for _, it := range ss.queue {
			if !it.notBefore.IsZero() {
				lc.timed = true
				next = earliest(next, it.notBefore)
			}
		}
	}
	return next
}

// armTimer makes the handler's timer fire at next (zero: never).
func (h *Handler) armTimer(next time.Time) {
	lc := &h.lc
	if next.IsZero() {
		if lc.timer != nil {
			// Dropped rather than kept stopped: most idle handlers have
			// no deadline.
			lc.timer.Stop()
			lc.timer = nil
		}
		lc.timerAt = 0
		return
	}
	if next.UnixNano() == lc.timerAt {
		return
	}
	d := max(next.Sub(h.e.opts.Now()), 0)
	if lc.timer == nil {
		lc.timer = time.AfterFunc(d, h.timerFired)
	} else {
		lc.timer.Reset(d)
	}
	lc.timerAt = next.UnixNano()
}

// timerFired runs on a timer's goroutine (the handler's timer, or the
// linger timer): it only posts a message. A late or stale firing is
// harmless, fireTimers acts on what is due.
func (h *Handler) timerFired() {
	_ = h.post(context.Background(), msg{kind: msgTimer})
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}
