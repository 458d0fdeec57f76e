package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/errid"
)

// loopState is what the control loop keeps across parks: the timer of the
// handler's next deadline, the context of its step runs, and a few counters.
// It lives in the Handler and is used only by the goroutine running loop.
type loopState struct {
	// restored: the loop starts by recording RecordRestored.
	restored bool
	// timed is set when a waiter deadline or a retry backoff may be pending,
	// so the loop only scans for the next due time when there can be one.
	timed bool
	// r is the loop's working state; it is dropped when the loop parks with
	// nothing pending, so an idle handler in memory does not carry it.
	r *runner

	timer *time.Timer
	// timerAt is when timer is due (Unix nanoseconds; 0: not armed).
	timerAt  int64
	nextExec uint64

	// ctx is the parent of every step run's context. It exists while runs
	// may be in progress: made by the first run, cancelled when the loop
	// parks (no run is in progress then) or exits.
	ctx    context.Context
	cancel context.CancelFunc
}

// runner holds what only the control loop needs besides the state while it
// works: the batch it is gathering for the journal.
type runner struct {
	h       *Handler
	s       *state
	wf      *compiled
	journal Journal
	now     time.Time // the loop's clock for the current iteration

	records []Record
	acks    []chan<- ackResult
	created bool
	// Waiters added, resolved and dropped since the last change, and
	// whether the list of children grew: the journal keeps task and
	// wake-up indexes from them.
	newWaiters      []WaiterInfo
	resolved        []Resolution
	dropped         []WaiterInfo
	childrenChanged bool

	// lingerSince is when the loop began holding back a batch (Linger).
	lingerSince time.Time
	lingerTimer *time.Timer

	stopping bool
	released bool
	exit     exitReason
}

func newRunner(h *Handler) *runner {
	r := &runner{h: h, s: h.st, wf: h.st.wf, journal: h.e.opts.Journal}
	r.now = h.e.opts.Now()
	if h.lc.restored {
		h.lc.restored = false
		r.record(Record{Kind: RecordRestored})
	}
	return r
}

// pending reports whether the runner holds anything for the journal or a
// caller, so that it must be kept while the loop parks.
func (r *runner) pending() bool {
	return len(r.records) > 0 || len(r.acks) > 0 || r.created || r.released || len(r.newWaiters) > 0 ||
		len(r.resolved) > 0 || len(r.dropped) > 0 || r.childrenChanged || !r.lingerSince.IsZero()
}

// loop is the handler's owner goroutine while it has work. It parks (the
// goroutine exits, the state stays) when no step run is in progress and
// the inbox is empty; the next message starts it again (Handler.post), and
// timers post messages too. An idle handler in memory therefore costs no
// goroutine, and still only one goroutine at a time owns the state.
func (h *Handler) loop() {
	h.st.thaw()
	r := h.lc.r
	if r == nil {
		r = newRunner(h)
		h.lc.r = r
	}
	for r.exit == 0 {
		if m, ok := h.receive(r.stopping); ok {
			r.now = h.e.opts.Now()
			r.handle(m)
			// Take what else is waiting before settling, so that one
			// journal change covers a burst of messages.
			for i := 0; i < 63 && r.exit == 0; i++ {
				m, ok := h.tryReceive()
				if !ok {
					break
				}
				r.handle(m)
			}
		} else {
			r.exit = exitStopped
		}
		r.settle()
		if r.exit == 0 && !r.stopping && r.runningCount() == 0 {
			// Nothing runs: the runs' context and what the runner holds
			// are not needed while parked. If a message came meanwhile,
			// they are made again.
			h.lc.endRuns()
			if !r.pending() {
				if r.lingerTimer != nil {
					r.lingerTimer.Stop()
				}
				h.lc.r = nil
			}
			if !h.st.idleSince.IsZero() && h.e.compactIdle() {
				h.st.freeze()
			}
			if h.park() {
				return
			}
			h.st.thaw()
			if h.lc.r == nil {
				h.lc.r = r
			}
		}
	}
	if h.lc.timer != nil {
		h.lc.timer.Stop()
	}
	if r.lingerTimer != nil {
		r.lingerTimer.Stop()
	}
	h.lc.endRuns()
	h.lc.r = nil
	h.e.forget(h)
	left := h.closeInbox(r.exit)
	if len(left) > 0 {
		err := h.afterExit()
		for _, m := range left {
			refuse(m, err)
		}
	}
	if m := h.st.rare(); r.exit == exitTerminal && m.parent != "" && h.e.opts.Starter == nil {
		// Without a Starter the engine runs children itself and tells a
		// parent in memory (a server does this durably instead).
		if p, ok := h.e.Handler(m.parent); ok {
			go func() {
				_ = p.SendEvent(context.Background(), ChildDoneEvent(h.st.id, ChildResult{Status: h.st.status, Result: m.result, Error: m.err}),
					WithIdempotencyKey("child:"+h.st.id))
			}()
		}
	}
}

// runsContext returns the parent context of step runs, making it if needed.
func (lc *loopState) runsContext() context.Context {
	if lc.ctx == nil {
		lc.ctx, lc.cancel = context.WithCancel(context.Background())
	}
	return lc.ctx
}

// endRuns cancels the runs' context: the handler ended, or no run is in
// progress.
func (lc *loopState) endRuns() {
	if lc.cancel != nil {
		lc.cancel()
		lc.ctx, lc.cancel = nil, nil
	}
}

func (r *runner) handle(m msg) {
	s := r.s
	switch m.kind {
	case msgStart:
		r.created = true
		ev := m.p.ev
		ev.ID = r.newID()
		s.start = ev
		r.deliver(ev)
		r.acks = append(r.acks, m.ack)
	case msgDone:
		r.finish(m.exec, m.err)
	case msgSend:
		if m.p.key != "" && s.hasKey(m.p.key) {
			// A retry of an event already taken: acknowledge it with this
			// batch and deliver nothing, whatever the handler waits for now.
			r.acks = append(r.acks, m.ack)
			m.reply <- reply{}
			return
		}
		err := r.checkExternal(m.p.ev)
		if err == nil {
			err = r.checkHeld([]Event{m.p.ev})
		}
		if err != nil {
			m.reply <- reply{err: err}
			return
		}
		if m.p.key != "" {
			s.seenKey(m.p.key)
		}
		ev := m.p.ev
		ev.ID = ""
		r.deliver(ev)
		r.acks = append(r.acks, m.ack)
		m.reply <- reply{}
	case msgCancel:
		if s.status.Terminal() {
			m.reply <- reply{err: fmt.Errorf("%w: handler %s is %v", ErrHandlerDone, s.id, s.status)}
			return
		}
		r.terminate(StatusCancelled, nil, "cancelled")
		r.acks = append(r.acks, m.ack)
		m.reply <- reply{}
	case msgSnapshot:
		r.update()
		m.reply <- reply{state: s.toProto()}
	case msgInfo:
		r.update()
		m.reply <- reply{info: s.info()}
	case msgRelease:
		r.update()
		switch {
		case s.status.Terminal():
			m.reply <- reply{err: fmt.Errorf("%w: handler %s is %v", ErrHandlerDone, s.id, s.status)}
		case s.idleSince.IsZero():
			m.reply <- reply{err: fmt.Errorf("%w: %s", ErrNotIdle, s.id)}
		default:
			r.record(Record{Kind: RecordReleased})
			r.acks = append(r.acks, m.ack)
			r.released = true
			r.exit = exitReleased
			m.reply <- reply{state: s.toProto()}
		}
	case msgStop:
		r.stopping = true
	case msgTimer:
		r.h.lc.timerAt = 0
		r.fireTimers()
	case msgGet:
		v, ok := s.rare().kv[m.p.key]
		m.reply <- reply{val: v, ok: ok}
	case msgSet:
		m.reply <- reply{err: s.setKV(m.p.key, m.p.val, r.h.e.lim.MaxStoreBytes)}
	case msgAddChild:
		if x := s.rareMut(); !slices.Contains(x.children, m.p.key) {
			if limit := r.h.e.lim.MaxChildren; len(x.children) >= limit {
				m.reply <- reply{err: fmt.Errorf("%w: handler %s has started %d children, the limit (Limits.MaxChildren)", ErrLimit, s.id, limit)}
				return
			}
			x.children = append(x.children, m.p.key)
			r.childrenChanged = true
		}
		m.reply <- reply{}
	case msgChildren:
		m.reply <- reply{children: maps.Clone(s.rare().childResults)}
	case msgCollect:
		if m.exec.finished {
			m.reply <- reply{err: fmt.Errorf("%w: the run is over", ErrClosed)}
			return
		}
		evs, err := r.collect(m.exec.step, m.p.ev, m.p.key, m.p.types)
		m.reply <- reply{events: evs, err: err}
	}
}

// checkExternal decides whether an event from outside may enter.
func (r *runner) checkExternal(ev Event) error {
	s := r.s
	if s.status.Terminal() {
		return fmt.Errorf("%w: handler %s is %v", ErrHandlerDone, s.id, s.status)
	}
	switch ev.Type {
	case "":
		return fmt.Errorf("%w: event has no type", ErrInvalidEvent)
	case StartEvent, StopEvent:
		return fmt.Errorf("%w: %q is reserved", ErrInvalidEvent, ev.Type)
	}
	if r.wf.external[ev.Type] || ev.Type == ChildEvent {
		return nil
	}
	for i := range s.steps {
		for _, w := range s.steps[i].waiters {
			if w.eventType == ev.Type {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: workflow %q does not accept %q from outside (%s) and no step of handler %s waits for it",
		ErrInvalidEvent, r.wf.def.Name, ev.Type, AcceptedList(slices.Sorted(maps.Keys(r.wf.external))), s.id)
}

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
	if ev.Type == StopEvent {
		r.terminate(StatusCompleted, ev.Data, "")
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
	for i := range s.steps {
		ss := &s.steps[i]
		for j := 0; j < len(ss.waiters); {
			w := ss.waiters[j]
			if w.eventType == ev.Type && r.satisfies(w, ev) {
				ss.waiters = slices.Delete(ss.waiters, j, j+1)
				r.resume(w, waitResult{ev: ev})
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
	it := w.resume
	if it.resolved == nil {
		it.resolved = map[string]waitResult{}
	}
	it.resolved[w.id] = res
	it.notBefore = time.Time{}
	r.s.steps[w.step].queue = append(r.s.steps[w.step].queue, it)
}

func (r *runner) collect(step int, ev Event, key string, types []string) ([]Event, error) {
	if v, ok := r.s.rare().kv[key]; ok {
		return eventsFromValue(v), nil
	}
	ss := &r.s.steps[step]
	if !slices.ContainsFunc(ss.collected, func(e Event) bool { return e.ID == ev.ID }) {
		ss.collected = append(ss.collected, ev)
	}
	used := make([]bool, len(ss.collected))
	picked := make([]int, 0, len(types))
	for _, t := range types {
		found := -1
		for i, e := range ss.collected {
			if !used[i] && e.Type == t {
				found = i
				break
			}
		}
		if found < 0 {
			return nil, nil
		}
		used[found] = true
		picked = append(picked, found)
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

// dispatch starts every queued run that has a free worker and is due.
func (r *runner) dispatch() {
	s := r.s
	for i := range s.steps {
		ss := &s.steps[i]
		def := &r.wf.def.Steps[i]
		for len(ss.running) < def.Workers && len(ss.queue) > 0 {
			k := 0
			for k < len(ss.queue) && !ss.queue[k].notBefore.IsZero() && ss.queue[k].notBefore.After(r.now) {
				k++
			}
			if k == len(ss.queue) {
				break
			}
			it := ss.queue[k]
			copy(ss.queue[k:], ss.queue[k+1:])
			ss.queue[len(ss.queue)-1] = item{}
			ss.queue = ss.queue[:len(ss.queue)-1]
			if len(ss.queue) == 0 {
				ss.queue = nil // an idle handler keeps no empty buffers
			}
			r.start(i, it)
		}
	}
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

func (r *runner) start(step int, it item) {
	ss := &r.s.steps[step]
	def := &r.wf.def.Steps[step]
	worker := ss.freeWorker()
	r.h.lc.nextExec++
	x := &execution{h: r.h, id: r.h.lc.nextExec, step: step, worker: worker, item: it, startedAt: r.now}
	x.sc.x = x
	ctx := r.h.lc.runsContext()
	if def.Timeout > 0 {
		ctx, x.cancel = context.WithTimeout(ctx, def.Timeout)
	}
	x.ctx = ctx
	ss.running = append(ss.running, x)
	r.record(Record{Kind: RecordStepState, Step: StepChange{
		Step: def.Name, Worker: worker, Running: true, InputType: it.ev.Type, Attempt: it.attempt,
	}})
	go r.h.run(ctx, x, def)
}

// run executes one step run on its own goroutine and reports to the loop.
func (h *Handler) run(ctx context.Context, x *execution, def *Step) {
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
	report(h.call1(ctx, x, def))
}

type errTimedOut struct{ d time.Duration }

func (e errTimedOut) Error() string { return fmt.Sprintf("step timed out after %v", e.d) }

// call1 runs the step. A panic fails the run: its error (which clients
// see on the stream and as the handler's error) says what panicked, and
// the stack, which names source files, goes to the log under an error id
// the message carries.
func (h *Handler) call1(ctx context.Context, x *execution, def *Step) (err error) {
	defer func() {
		if p := recover(); p != nil {
			id := errid.New()
			h.e.log.Error("step panicked", "handler", h.st.id, "step", def.Name, "error_id", id,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("step %q panicked: %v (error id %s)", def.Name, p, id)
		}
	}()
	return def.Run(ctx, &x.sc, x.item.ev)
}

// finish applies the end of a run.
func (r *runner) finish(x *execution, err error) {
	if x.finished {
		return
	}
	x.finished = true
	s := r.s
	ss := &s.steps[x.step]
	if i := slices.Index(ss.running, x); i >= 0 {
		ss.running = slices.Delete(ss.running, i, i+1)
		if len(ss.running) == 0 {
			ss.running = nil // an idle handler keeps no empty buffers
		}
	}
	if x.cancel != nil {
		x.cancel()
	}
	if s.status.Terminal() {
		return
	}
	def := &r.wf.def.Steps[x.step]
	ch := StepChange{Step: def.Name, Worker: x.worker, InputType: x.item.ev.Type, Attempt: x.item.attempt}
	// A timeout is reported while the step may still be running: its
	// outputs must not be read.
	var timedOut errTimedOut
	isTimeout := errors.As(err, &timedOut)
	if !isTimeout {
		// The run has ended, so its fields are the loop's to read.
		switch {
		case x.fault() != nil:
			err = x.fault()
		case err == nil || errors.Is(err, ErrWaiting):
			if herr := r.checkHeld(x.sent); herr != nil {
				err = fmt.Errorf("step %q sends %d events: %w", def.Name, len(x.sent), herr)
			}
		}
	}
	parked := !isTimeout && x.wait != nil && (err == nil || errors.Is(err, ErrWaiting))
	switch {
	case parked:
		ch.Waiting = true
		r.commit(x, &ch)
		w := x.wait
		w.resume = x.item
		w.created = r.now
		if !w.deadline.IsZero() {
			r.h.lc.timed = true
		}
		ss.waiters = append(ss.waiters, w)
		r.newWaiters = append(r.newWaiters, w.info(r.wf.def.Steps))
		if w.target().children != nil && r.satisfies(w, Event{}) {
			// The last child ended while the run was deciding to wait.
			ss.waiters = ss.waiters[:len(ss.waiters)-1]
			r.resume(w, waitResult{ev: Event{Type: ChildEvent}})
		}
	case err == nil:
		if x.usedOnce {
			r.dropOnce(def.Name, x.item.ev.ID)
		}
		r.commit(x, &ch)
	default:
		if errors.Is(err, ErrWaiting) {
			err = fmt.Errorf("step returned ErrWaiting without waiting: %w", err)
		}
		ch.Error = cleanError(err.Error())
		r.record(Record{Kind: RecordStepState, Step: ch})
		if x.item.attempt < def.Retry.MaxAttempts {
			it := x.item
			it.attempt++
			it.notBefore = r.now.Add(def.Retry.Backoff(it.attempt))
			r.h.lc.timed = true
			ss.queue = append(ss.queue, it)
			return
		}
		r.terminate(StatusFailed, nil, cleanError(fmt.Sprintf("step %q failed after %d attempt(s): %v", def.Name, x.item.attempt, err)))
	}
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

func (r *runner) dropOnce(step, eventID string) {
	prefix := onceKeyPrefix(step, eventID)
	for k := range r.s.rare().kv {
		if strings.HasPrefix(k, prefix) {
			_ = r.s.setKV(k, nil, 0) // a delete always fits
		}
	}
}

func (r *runner) fireTimers() {
	s := r.s
	if d := s.rare().deadline; !d.IsZero() && !d.After(r.now) {
		r.terminate(StatusFailed, nil, fmt.Sprintf("%v after %v", ErrWorkflowTimeout, r.wf.def.Timeout))
		return
	}
	for i := range s.steps {
		ss := &s.steps[i]
		for j := 0; j < len(ss.waiters); {
			w := ss.waiters[j]
			if !w.deadline.IsZero() && !w.deadline.After(r.now) {
				ss.waiters = slices.Delete(ss.waiters, j, j+1)
				r.resume(w, waitResult{timedOut: true})
				continue
			}
			j++
		}
	}
}

func (r *runner) terminate(status Status, result *structpb.Struct, errMsg string) {
	s := r.s
	s.status = status
	m := s.rareMut()
	m.result = result
	m.err = errMsg
	m.completedAt = r.now
	s.idleSince = time.Time{}
	for i := range s.steps {
		s.steps[i].running = nil
		for _, w := range s.steps[i].waiters {
			r.dropped = append(r.dropped, w.info(r.wf.def.Steps))
		}
	}
	r.record(Record{Kind: RecordTerminal, Status: status, Result: result, Error: errMsg})
	r.exit = exitTerminal
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
		r.dispatch()
	}
	if !s.idleSince.IsZero() || !r.quiescent() {
		return
	}
	waiters := 0
	for i := range s.steps {
		waiters += len(s.steps[i].waiters)
	}
	if waiters == 0 && !r.wf.wakeable {
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

func (r *runner) record(rec Record) {
	r.s.seq++
	rec.Seq = r.s.seq
	rec.Time = r.now
	r.records = append(r.records, rec)
}

func (r *runner) settle() {
	r.update()
	if r.stopping && r.exit == 0 && r.runningCount() == 0 {
		r.exit = exitStopped
	}
	if !r.linger() {
		r.flush()
	}
	r.resetTimer()
}

// linger reports whether to hold this batch back: with Options.Linger set,
// while step runs are in progress and for at most that long, changes gather
// into one journal change, so a quick step's start and end (and the
// acknowledgement of the call that started it) share one commit.
func (r *runner) linger() bool {
	d := r.h.e.opts.Linger
	if d <= 0 || r.journal == nil || r.exit != 0 || r.stopping || r.runningCount() == 0 {
		return false
	}
	if len(r.records) == 0 && len(r.acks) == 0 && !r.created {
		return false
	}
	if r.lingerSince.IsZero() {
		r.lingerSince = r.now
		if r.lingerTimer == nil {
			r.lingerTimer = time.AfterFunc(d, r.h.lingerOver)
		} else {
			r.lingerTimer.Reset(d)
		}
	}
	return r.now.Sub(r.lingerSince) < d
}

// lingerOver runs on the timer's goroutine and wakes the loop to flush.
func (h *Handler) lingerOver() {
	_ = h.post(context.Background(), msg{kind: msgTimer})
}

func (r *runner) runningCount() int {
	n := 0
	for i := range r.s.steps {
		n += len(r.s.steps[i].running)
	}
	return n
}

// flush hands the batch of changes to the journal.
func (r *runner) flush() {
	if len(r.records) == 0 && len(r.acks) == 0 && !r.created && !r.released && len(r.resolved) == 0 && !r.childrenChanged {
		return
	}
	if r.journal != nil && len(r.records) == 1 && r.records[0].Kind == RecordRestored && len(r.acks) == 0 &&
		!r.created && !r.released && len(r.resolved) == 0 && len(r.newWaiters) == 0 && len(r.dropped) == 0 && !r.childrenChanged {
		// A restore by itself changes nothing durable: its record waits
		// for the next change (usually the event that caused the load),
		// so that waking a handler costs one commit, not two.
		return
	}
	s := r.s
	r.lingerSince = time.Time{}
	if r.journal == nil {
		for _, a := range r.acks {
			a <- ackResult{}
		}
		clear(r.acks)
		r.acks = r.acks[:0]
		clear(r.records)
		r.records = r.records[:0]
		r.created = false
		r.newWaiters, r.resolved, r.dropped, r.childrenChanged = nil, nil, nil, false
		return
	}
	m := s.rare()
	c := &Change{
		HandlerID: s.id, Workflow: r.wf.def.Name, Created: r.created, Released: r.released,
		Status: s.status, Idle: s.idleInfo(), CreatedAt: s.createdAt, UpdatedAt: r.now, CompletedAt: m.completedAt, Deadline: m.deadline,
		Result: m.result, Error: m.err, Records: r.records, st: s, acks: r.acks,
		NewWaiters: r.newWaiters, Resolved: r.resolved, Dropped: r.dropped, Parent: m.parent,
		Waiters: r.waiters(),
	}
	if r.childrenChanged || (m.lastChildren == nil && len(m.children) > 0) {
		s.rareMut().lastChildren = slices.Clone(m.children)
	}
	c.Children = s.rare().lastChildren
	r.records, r.acks, r.created = nil, nil, false
	r.newWaiters, r.resolved, r.dropped, r.childrenChanged = nil, nil, nil, false
	r.journal.Append(c)
	c.st = nil
}

func (r *runner) resetTimer() {
	next := time.Time{}
	if r.exit == 0 {
		next = r.s.rare().deadline
		if r.h.lc.timed {
			r.h.lc.timed = false
			for i := range r.s.steps {
				ss := &r.s.steps[i]
				for _, w := range ss.waiters {
					if !w.deadline.IsZero() {
						r.h.lc.timed = true
						next = earliest(next, w.deadline)
					}
				}
				for _, it := range ss.queue {
					if !it.notBefore.IsZero() {
						r.h.lc.timed = true
						next = earliest(next, it.notBefore)
					}
				}
			}
		}
	}
	if next.IsZero() {
		if r.h.lc.timer != nil {
			// Dropped rather than kept stopped: most idle handlers have
			// no deadline.
			r.h.lc.timer.Stop()
			r.h.lc.timer = nil
		}
		r.h.lc.timerAt = 0
		return
	}
	if next.UnixNano() == r.h.lc.timerAt {
		return
	}
	d := max(next.Sub(r.h.e.opts.Now()), 0)
	if r.h.lc.timer == nil {
		r.h.lc.timer = time.AfterFunc(d, r.h.timerFired)
	} else {
		r.h.lc.timer.Reset(d)
	}
	r.h.lc.timerAt = next.UnixNano()
}

// timerFired runs on the timer's goroutine: it only posts a message. A
// late or stale firing is harmless, fireTimers acts on what is due.
func (h *Handler) timerFired() {
	_ = h.post(context.Background(), msg{kind: msgTimer})
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
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
