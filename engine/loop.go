package engine

// The control loop's lifecycle and its dispatch of messages: the goroutine
// that owns a handler's state while it has work, how it parks and exits,
// and what each message does. Delivery of events is in deliver.go, step
// runs in run.go, the batch for the journal in batch.go, timers in
// timers.go; the inbox is in mailbox.go.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wfd-dev/wfd/attrs"

	"google.golang.org/protobuf/types/known/structpb"
)

// maxBatch is how many messages the loop takes before it settles, so that
// one journal change covers a burst of messages.
const maxBatch = 64

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
	acks    []chan<- error
	created bool
	// Waiters added, resolved and dropped since the last change, and
	// whether the list of children grew: the journal keeps task and
	// wake-up indexes from them.
	newWaiters      []WaiterInfo
	resolved        []Resolution
	dropped         []WaiterInfo
	changedTasks    []WaiterInfo // pending tasks a TaskUpdate changed (tasklife.go)
	childrenChanged bool

	// lingerSince is when the loop began holding back a batch (Linger),
	// lingerUntil when the timer is armed to end the hold.
	lingerSince time.Time
	lingerUntil time.Time
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
		// One message (waiting for it), then whatever else is queued, up
		// to maxBatch, so that one journal change covers a burst.
		if m, ok := h.receive(r.stopping); ok {
			r.now = h.e.opts.Now()
			r.handle(m)
			for i := 1; i < maxBatch && r.exit == 0; i++ {
				m, ok := h.tryReceive()
				if !ok {
					break
				}
				r.handle(m)
			}
		} else if h.lost.Load() {
			r.exit = exitLost
		} else {
			r.exit = exitStopped
		}
		r.settle()
		if r.exit == 0 && !r.stopping && r.runningCount() == 0 && h.tryPark(r) {
			return
		}
	}
	h.exitLoop(r)
}

// tryPark lets the loop goroutine go while no step runs. It reports whether
// it did (the goroutine must return); if a message came meanwhile the loop
// goes on with r.
func (h *Handler) tryPark(r *runner) bool {
	// Nothing runs: the runs' context and what the runner holds are not
	// needed while parked. If a message came meanwhile, they are made
	// again.
	h.lc.endRuns()
	if !r.pending() {
		r.stopLinger()
		h.lc.r = nil
	}
	if !h.st.idleSince.IsZero() && h.e.compactIdle() {
		h.st.freeze()
	}
	if h.park() {
		return true
	}
	h.st.thaw()
	if h.lc.r == nil {
		h.lc.r = r
	}
	return false
}

// exitLoop ends the loop for good: the handler ended, was released or
// lost, or the engine stopped. It runs after the loop's last Append: only
// then does the handler leave the registry, so that a load that finds it
// gone finds its last changes in the journal's hands. Runs in progress are
// cancelled (their reports are dropped); what is left in the inbox, and
// the callers of a batch a lost handler never handed over, get the reason.
func (h *Handler) exitLoop(r *runner) {
	if h.lc.timer != nil {
		h.lc.timer.Stop()
	}
	r.stopLinger()
	h.lc.endRuns()
	h.lc.r = nil
	h.e.forget(h)
	left := h.closeInbox(r.exit)
	if len(left) > 0 || len(r.acks) > 0 {
		err := h.afterExit()
		for _, a := range r.acks {
			a <- err
		}
		r.acks = nil
		for _, m := range left {
			refuse(m, err)
		}
	}
	if r.exit == exitTerminal && !h.lost.Load() {
		h.tellParent()
	}
}

// tellParent tells a parent in memory that this child ended. Without a
// Starter the engine runs children itself and does this; a server does it
// durably instead.
func (h *Handler) tellParent() {
	m := h.st.rare()
	if m.parent == "" || h.e.opts.Starter != nil {
		return
	}
	if p, ok := h.e.Handler(m.parent); ok {
		go func() {
			_ = p.SendEvent(context.Background(), ChildDoneEvent(h.st.id, ChildResult{Status: h.st.status, Result: m.result, Error: m.err}),
				SendOptions{IdempotencyKey: "child:" + h.st.id, FromWfd: true})
		}()
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

// handle applies one message to the state. Messages that ask for something
// are answered on m.reply; those that change something durable are
// acknowledged on m.ack once the change holding them is committed.
func (r *runner) handle(m msg) {
	s := r.s
	switch m.kind {
	case msgStart:
		r.handleStart(m)
	case msgDone:
		r.finish(m.exec, m.err)
	case msgSend:
		err := r.handleSend(m)
		if err != nil && judgedOnState(err) && r.refuseWhenDurable(m.ack, err) {
			m.reply <- reply{} // the refusal comes on m.ack (refusal.go)
			return
		}
		m.reply <- reply{err: err}
	case msgCancel:
		m.reply <- reply{err: r.handleCancel(m)}
	case msgSnapshot:
		r.update()
		m.reply <- reply{state: s.toProto()}
	case msgInfo:
		r.update()
		m.reply <- reply{info: s.info()}
	case msgRelease:
		m.reply <- r.handleRelease(m)
	case msgStop:
		r.stopping = true
	case msgTimer:
		r.h.lc.timerAt = 0
		r.fireTimers()
	default:
		r.handleRare(m)
	}
}

// handleRare applies the messages of the rarer kinds: those of a step's
// context (the key/value store, children, blocked runs, fan-in) and
// upgrades.
func (r *runner) handleRare(m msg) {
	s := r.s
	switch m.kind {
	case msgGet:
		v, ok := s.rare().kv[m.p.key]
		m.reply <- reply{val: v, ok: ok}
	case msgSet:
		err := s.setKV(m.p.key, m.p.val, r.h.e.lim.MaxStoreBytes)
		if err == nil && m.p.memo != nil {
			r.record(Record{Kind: RecordMemo, Memo: m.p.memo})
		}
		m.reply <- reply{err: err}
	case msgAddChild:
		m.reply <- reply{err: r.addChild(m.p.key)}
	case msgChildren:
		m.reply <- reply{children: maps.Clone(s.rare().childResults)}
	case msgBlocked:
		r.block(m.exec, m.p.key)
		m.reply <- reply{}
	case msgUpgrade:
		m.reply <- reply{err: r.handleUpgrade(m)}
	case msgSetAttrs:
		// The new set rides the batch's change, as the run's other effects do.
		if next := attrs.Merge(s.rare().attrs, m.p.attrs); !next.Equal(s.rare().attrs) {
			s.rareMut().setAttrs(next)
		}
		m.reply <- reply{}
	case msgCollect:
		if m.exec.finished {
			m.reply <- reply{err: fmt.Errorf("%w: the run is over", ErrClosed)}
			return
		}
		evs, err := r.collect(m.exec.step, m.p.ev, m.p.key, m.p.types)
		m.reply <- reply{events: evs, err: err}
	}
}

// handleStart queues the start event of a new handler, and the events
// the start brings (Start checked them), in the same batch: they are
// committed with the creation.
func (r *runner) handleStart(m msg) {
	r.created = true
	ev := m.p.ev
	ev.ID = r.newID()
	r.s.start = ev
	r.deliver(ev)
	for _, in := range m.p.initial {
		if in.IdempotencyKey != "" {
			r.s.addKey(in.IdempotencyKey)
		}
		ev := in.Event
		ev.ID = ""
		r.deliver(ev)
	}
	r.acks = append(r.acks, m.ack)
}

// handleSend takes an event from outside, unless the handler has taken it
// already (same idempotency key) or may not take it.
func (r *runner) handleSend(m msg) error {
	s := r.s
	if m.p.key != "" && s.hasKey(m.p.key) {
		// A retry of an event already taken: acknowledge it with this
		// batch and deliver nothing, whatever the handler waits for now.
		r.acks = append(r.acks, m.ack)
		return nil
	}
	err := s.accepts(m.p.ev, m.p.fromWfd)
	if err == nil {
		err = r.checkHeld([]Event{m.p.ev})
	}
	if err != nil {
		return err
	}
	if m.p.key != "" {
		s.addKey(m.p.key)
	}
	ev := m.p.ev
	ev.ID = ""
	r.deliver(ev)
	r.acks = append(r.acks, m.ack)
	return nil
}

// handleCancel ends the handler as cancelled.
func (r *runner) handleCancel(m msg) error {
	if r.s.status.Terminal() {
		return errHandlerDone(r.s.id, r.s.status)
	}
	r.terminate(StatusCancelled, nil, "cancelled")
	r.acks = append(r.acks, m.ack)
	return nil
}

// handleRelease takes an idle handler out of memory: the loop exits after
// this batch, and the reply carries the state to keep.
func (r *runner) handleRelease(m msg) reply {
	s := r.s
	r.update()
	switch {
	case s.status.Terminal():
		return reply{err: errHandlerDone(s.id, s.status)}
	case s.idleSince.IsZero():
		return reply{err: fmt.Errorf("%w: %s", ErrNotIdle, s.id)}
	}
	r.record(Record{Kind: RecordReleased})
	r.acks = append(r.acks, m.ack)
	r.released = true
	r.exit = exitReleased
	return reply{state: s.toProto()}
}

// addChild remembers a child a run starts, within Limits.MaxChildren.
func (r *runner) addChild(id string) error {
	x := r.s.rareMut()
	if slices.Contains(x.children, id) {
		return nil
	}
	if limit := r.h.e.lim.MaxChildren; len(x.children) >= limit {
		return fmt.Errorf("%w: handler %s has started %d children, the limit (Limits.MaxChildren)", ErrLimit, r.s.id, limit)
	}
	x.children = append(x.children, id)
	r.childrenChanged = true
	return nil
}

// terminate ends the handler with status: its runs are abandoned, its
// waiters dropped, and the loop exits after this batch.
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
