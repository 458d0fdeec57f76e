package engine

// Step runs: starting the queued runs that have a free worker and are due,
// running a step on its own goroutine, and applying how a run ended
// (finished, parked in a wait, or failed and retried).

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/wfd-dev/wfd/flow"
	"github.com/wfd-dev/wfd/internal/errid"
)

// startDueRuns starts every queued run that has a free worker and is due.
func (r *runner) startDueRuns() {
	s := r.s
	for i := range s.steps {
		ss := &s.steps[i]
		def := &r.wf.def.Steps[i]
		for len(ss.running) < def.Workers && len(ss.queue) > 0 {
			it, ok := ss.takeDue(r.now)
			if !ok {
				break
			}
			r.start(i, it)
		}
	}
}

// takeDue takes the first queued item that is due (not in a retry's
// backoff at now) off the step's queue.
func (ss *stepState) takeDue(now time.Time) (item, bool) {
	k := slices.IndexFunc(ss.queue, func(it item) bool { return it.notBefore.IsZero() || !it.notBefore.After(now) })
	if k < 0 {
		return item{}, false
	}
	it := ss.queue[k]
	copy(ss.queue[k:], ss.queue[k+1:])
	ss.queue[len(ss.queue)-1] = item{}
	ss.queue = ss.queue[:len(ss.queue)-1]
	if len(ss.queue) == 0 {
		ss.queue = nil // an idle handler keeps no empty buffers
	}
	return it, true
}

// freeWorker returns the lowest worker slot that no run in progress holds.
// It is derived rather than kept, so an idle handler holds no slots.
func (ss *stepState) freeWorker() int {
	if n := len(ss.running); n > 32 {
		used := make([]bool, n+1)
		for _, x := range ss.running {
			if x.worker <= n {
				used[x.worker] = true
			}
		}
		return slices.Index(used, false)
	}
	for w := 0; ; w++ {
		if !slices.ContainsFunc(ss.running, func(x *execution) bool { return x.worker == w }) {
			return w
		}
	}
}

// start starts a run of step on item it, on its own goroutine.
func (r *runner) start(step int, it item) {
	ss := &r.s.steps[step]
	def := &r.wf.def.Steps[step]
	worker := ss.freeWorker()
	r.h.lc.nextExec++
	x := &execution{h: r.h, id: r.h.lc.nextExec, step: step, worker: worker, item: it, startedAt: r.now}
	x.rc.x = x
	x.sc = flow.NewStepContext(&x.rc)
	ctx := r.h.lc.runsContext()
	if def.Timeout > 0 {
		ctx, x.cancel = context.WithTimeout(ctx, def.Timeout)
	}
	x.ctx = ctx
	ss.running = append(ss.running, x)
	r.record(Record{Kind: RecordStepState, Step: StepChange{
		Step: def.Name, Worker: worker, Running: true, InputType: it.ev.Type, Attempt: it.attempt,
	}})
	// The hook runs here, on the loop, while the call that caused the run
	// (an event's SendEvent, say) is still waiting for its commit.
	runCtx, end := ctx, func(error) {}
	if hook := r.h.e.opts.OnStepRun; hook != nil {
		runCtx, end = hook(ctx, StepRun{HandlerID: r.h.ID(), Workflow: r.h.Workflow(), Step: def.Name, Attempt: it.attempt})
	}
	go r.h.run(ctx, runCtx, end, x, def)
}

// interruptedCount counts the runs in progress that returned
// ErrInterrupted: a stopping handler does not wait for them.
func (r *runner) interruptedCount() int {
	n := 0
	for i := range r.s.steps {
		for _, x := range r.s.steps[i].running {
			if x.interrupted {
				n++
			}
		}
	}
	return n
}

func (r *runner) runningCount() int {
	n := 0
	for i := range r.s.steps {
		n += len(r.s.steps[i].running)
	}
	return n
}

// run executes one step run on its own goroutine and reports to the loop;
// the step gets runCtx (ctx with what Options.OnStepRun added) and end
// the step's result.
func (h *Handler) run(ctx, runCtx context.Context, end func(error), x *execution, def *Step) {
	report := func(err error) {
		_ = h.post(context.Background(), msg{kind: msgDone, exec: x, err: err})
	}
	if def.Timeout > 0 {
		// A step that ignores its context still loses its worker at the
		// deadline; its late report is ignored.
		stop := context.AfterFunc(ctx, func() {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				report(errTimedOut{def.Timeout})
			}
		})
		defer stop()
	}
	err := h.callStep(runCtx, x, def)
	end(err)
	report(err)
}

type errTimedOut struct{ d time.Duration }

func (e errTimedOut) Error() string { return fmt.Sprintf("step timed out after %v", e.d) }

// callStep runs the step's code. A panic fails the run: its error (which
// clients see on the stream and as the handler's error) says what
// panicked, and the stack, which names source files, goes to the log
// under an error id the message carries.
func (h *Handler) callStep(ctx context.Context, x *execution, def *Step) (err error) {
	defer func() {
		if p := recover(); p != nil {
			id := errid.New()
			h.e.log.Error("step panicked", "handler", h.st.id, "step", def.Name, "error_id", id,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("step %q panicked: %v (error id %s)", def.Name, p, id)
		}
	}()
	return def.Run(ctx, x.sc, x.item.ev)
}

// finish applies the end of a run: err is what the step returned (or its
// timeout).
func (r *runner) finish(x *execution, err error) {
	if x.finished {
		return
	}
	x.finished = true
	if errors.Is(err, ErrInterrupted) && r.h.e.isClosing() {
		// Left in progress: the handler stops without waiting for it,
		// and a restore runs it again.
		x.interrupted = true
		return
	}
	// The run is over: it leaves the step's runs in progress.
	ss := &r.s.steps[x.step]
	if i := slices.Index(ss.running, x); i >= 0 {
		ss.running = slices.Delete(ss.running, i, i+1)
		if len(ss.running) == 0 {
			ss.running = nil // an idle handler keeps no empty buffers
		}
	}
	if x.cancel != nil {
		x.cancel()
	}
	if r.s.status.Terminal() {
		return
	}
	def := &r.wf.def.Steps[x.step]
	ch := StepChange{Step: def.Name, Worker: x.worker, InputType: x.item.ev.Type, Attempt: x.item.attempt}
	parked, err := r.outcome(x, def, err)
	switch {
	case parked:
		ch.Waiting = true
		r.commit(x, &ch)
		r.addWaiter(x)
	case err == nil:
		if x.usedOnce {
			r.dropOnce(def.Name, x.item.ev.ID)
		}
		r.commit(x, &ch)
	default:
		r.retryOrFail(x, def, &ch, err)
	}
}

// outcome decides how a run ended: whether it parked in a wait, and the
// error it failed with (nil when it finished or parked). An operation the
// run was refused, or events it sent past the handler's limits, fail it
// whatever the step returned.
func (r *runner) outcome(x *execution, def *Step, returned error) (parked bool, err error) {
	// A timeout is reported while the step may still be running: its
	// outputs must not be read.
	var timedOut errTimedOut
	if errors.As(returned, &timedOut) {
		return false, returned
	}
	err = returned
	// The run has ended, so its fields are the loop's to read.
	switch {
	case x.fault() != nil:
		err = x.fault()
	case err == nil || errors.Is(err, ErrWaiting):
		if herr := r.checkHeld(x.sent); herr != nil {
			err = fmt.Errorf("step %q sends %d events: %w", def.Name, len(x.sent), herr)
		}
	}
	if x.wait != nil && (err == nil || errors.Is(err, ErrWaiting)) {
		return true, nil
	}
	return false, err
}

// addWaiter records the wait a parked run ended in.
func (r *runner) addWaiter(x *execution) {
	ss := &r.s.steps[x.step]
	w := x.wait
	w.resume = x.item
	w.created = r.now
	if !w.deadline.IsZero() || !w.escalateAt().IsZero() {
		r.h.lc.timed = true
	}
	ss.waiters = append(ss.waiters, w)
	r.newWaiters = append(r.newWaiters, w.info(r.wf.def.Steps))
	if t := w.target().task; t != nil {
		r.record(Record{Kind: RecordTask, Task: &TaskChange{TaskID: t.ID, Title: t.Title, Assignee: t.Assignee, Change: TaskAsked}})
	}
	if w.target().children != nil && r.satisfies(w, Event{}) {
		// The last child ended while the run was deciding to wait.
		ss.waiters = ss.waiters[:len(ss.waiters)-1]
		r.resume(w, waitResult{ev: Event{Type: ChildEvent}})
	}
}

// retryOrFail records a failed run and queues it again after its backoff,
// or fails the handler once the step's attempts are spent.
func (r *runner) retryOrFail(x *execution, def *Step, ch *StepChange, err error) {
	if errors.Is(err, ErrWaiting) {
		err = fmt.Errorf("step returned ErrWaiting without waiting: %w", err)
	}
	ch.Error = cleanError(err.Error())
	r.record(Record{Kind: RecordStepState, Step: *ch})
	if x.item.attempt < def.Retry.MaxAttempts {
		it := x.item
		it.attempt++
		it.notBefore = r.now.Add(def.Retry.Backoff(it.attempt))
		r.h.lc.timed = true
		ss := &r.s.steps[x.step]
		ss.queue = append(ss.queue, it)
		return
	}
	r.terminate(StatusFailed, nil, cleanError(fmt.Sprintf("step %q failed after %d attempt(s): %v", def.Name, x.item.attempt, err)))
}

// commit applies what a finished or parked run wrote and sent.
func (r *runner) commit(x *execution, ch *StepChange) {
	for _, ev := range x.written {
		ev.ID = r.newID()
		r.record(Record{Kind: RecordEvent, Event: ev})
	}
	if len(x.sent) > 0 {
		ch.Emitted = make([]string, len(x.sent))
		for i, ev := range x.sent {
			ch.Emitted[i] = ev.Type
		}
	}
	r.record(Record{Kind: RecordStepState, Step: *ch})
	for _, ev := range x.sent {
		if r.s.status.Terminal() {
			return
		}
		r.deliver(ev)
	}
}

// dropOnce forgets what Once and Collect recorded for a run that finished.
func (r *runner) dropOnce(step, eventID string) {
	prefix := onceKeyPrefix(step, eventID)
	for k := range r.s.rare().kv {
		if strings.HasPrefix(k, prefix) {
			_ = r.s.setKV(k, nil, 0) // a delete always fits
		}
	}
}

// block records that run x waits (on != "") or no longer waits (on == "")
// for something outside the handler to execute it.
func (r *runner) block(x *execution, on string) {
	if x.finished || x.blocked == on {
		return
	}
	x.blocked = on
	r.record(Record{Kind: RecordBlocked, Blocked: &Blocked{Step: r.s.wf.def.Steps[x.step].Name, Attempt: x.item.attempt, On: on}})
}
