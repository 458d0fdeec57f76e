package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/flow"
	"github.com/wfd-dev/wfd/internal/names"
	pl "github.com/wfd-dev/wfd/internal/payload"
)

// execution is one run of a step. The loop creates it and reads its outputs
// only after the run has reported back, so the step goroutine owns the
// output fields while it runs.
type execution struct {
	h         *Handler
	id        uint64
	step      int
	worker    int
	item      item
	startedAt time.Time
	cancel    context.CancelFunc
	// finished is loop-owned: set when the loop has taken the run's result
	// (or its timeout), so a late report is ignored.
	finished bool

	// Written by the step goroutine.
	sent     []Event
	written  []Event
	wait     *waiter
	waits    int
	collects int
	childN   int
	usedOnce bool
	// interrupted: the run returned ErrInterrupted while the engine
	// closes; it stays in progress (loop-owned).
	interrupted bool
	// blocked is what the run waits for to be executed
	// (StepContext.Blocked; loop-owned).
	blocked string
	// out is made when the run first sends or writes data, or is refused
	// an operation (most runs of most steps do neither, and execution is
	// allocated per run).
	out *runOutput
	// ctx is the run's context, for the lookups step operations make.
	ctx   context.Context
	reply chan reply
	// rc carries out the calls of sc, the step's StepContext.
	rc stepContext
	sc *flow.StepContext
}

// stepContext carries out the calls of a run's flow.StepContext (it is
// the run's flow.Runtime). Like the StepContext it is used only during
// the run, and only from the run's goroutine.
type stepContext struct {
	x *execution
}

var _ flow.Runtime = (*stepContext)(nil)

// HandlerID carries out flow.StepContext.HandlerID.
func (sc *stepContext) HandlerID() string { return sc.x.h.st.id }

// Step carries out flow.StepContext.Step.
func (sc *stepContext) Step() string { return sc.x.h.st.wf.def.Steps[sc.x.step].Name }

// Attempt carries out flow.StepContext.Attempt.
func (sc *stepContext) Attempt() int { return sc.x.item.attempt }

// Send carries out flow.StepContext.Send.
func (sc *stepContext) Send(typ string, data *structpb.Struct) error {
	x := sc.x
	if !x.h.st.wf.emits[x.step][typ] {
		return fmt.Errorf("step %q sends %q: %w", sc.Step(), typ, ErrUndeclaredEvent)
	}
	name := "data"
	if typ == StopEvent {
		name = "result"
	}
	if err := sc.output(data, x.h.e.lim.payload(), name); err != nil {
		return sc.refuse(fmt.Errorf("step %q sends %q: %w", sc.Step(), typ, err))
	}
	x.sent = append(x.sent, Event{Type: typ, Data: data})
	return nil
}

// Write carries out flow.StepContext.Write.
func (sc *stepContext) Write(typ string, data *structpb.Struct) {
	x := sc.x
	lim := x.h.e.lim.payload()
	lim.MaxBytes = x.h.e.lim.MaxRecordBytes
	err := names.Check("the event type", typ, names.MaxNameBytes, true)
	if err == nil {
		err = sc.output(data, lim, "data")
	}
	if err != nil {
		// refuse records the fault on the step; its result is for callers that return it.
		_ = sc.refuse(fmt.Errorf("step %q writes %q: %w", sc.Step(), typ, err))
		return
	}
	x.written = append(x.written, Event{Type: typ, Data: data})
}

// runOutput is what a run's limits keep track of.
type runOutput struct {
	// fault is a refused operation (a bad payload, a limit): the run fails
	// with it whatever the step returns, so that a step that ignores the
	// error (Write returns none) stores nothing bad.
	fault error
	// bytes is what the run has sent and written so far.
	bytes int
}

func (x *execution) output() *runOutput {
	if x.out == nil {
		x.out = &runOutput{}
	}
	return x.out
}

// fault returns the run's refused operation, if any.
func (x *execution) fault() error {
	if x.out == nil {
		return nil
	}
	return x.out.fault
}

// output checks an event the run sends or writes, and counts it against
// the run's output limits.
func (sc *stepContext) output(data *structpb.Struct, lim pl.Limits, name string) error {
	x := sc.x
	n, err := pl.Measure(lim, name, data)
	if err != nil {
		return err
	}
	l := &x.h.e.lim
	if k := len(x.sent) + len(x.written); k >= l.MaxQueuedEvents {
		return fmt.Errorf("%w: the run already sent and wrote %d events, the limit (Limits.MaxQueuedEvents)", ErrLimit, k)
	}
	if n == 0 {
		return nil
	}
	o := x.output()
	if budget := runOutputPayloads * l.MaxPayloadBytes; o.bytes+n > budget {
		return fmt.Errorf("%w: the run's events would come to %d bytes, over the limit of %d (%d × Limits.MaxPayloadBytes)",
			ErrLimit, o.bytes+n, budget, runOutputPayloads)
	}
	o.bytes += n
	return nil
}

// refuse records err as the run's fault (the first one wins) and returns it.
func (sc *stepContext) refuse(err error) error {
	if o := sc.x.output(); o.fault == nil {
		o.fault = err
	}
	return err
}

// WaitFor carries out flow.StepContext.WaitFor.
func (sc *stepContext) WaitFor(typ string, opts WaitOptions) (Event, error) {
	if typ == "" || typ == StartEvent || typ == StopEvent {
		return Event{}, fmt.Errorf("%w: cannot wait for event type %q", ErrInvalidEvent, typ)
	}
	err := names.Check("the event type", typ, names.MaxNameBytes, true)
	if err == nil {
		err = pl.Check(sc.x.h.e.lim.payload(), "match", opts.Match)
	}
	if err != nil {
		return Event{}, sc.refuse(fmt.Errorf("step %q waits for %q: %w", sc.Step(), typ, err))
	}
	return sc.await(&waiter{eventType: typ, match: opts.Match}, sc.nextWaitID(), opts.Timeout,
		func() string { return fmt.Sprintf("waiting for %q", typ) })
}

// Sleep carries out flow.StepContext.Sleep.
func (sc *stepContext) Sleep(d time.Duration) error {
	// The wait's timeout is the sleep: once it passes the wait is resolved
	// (timed out), which is what the step waited for.
	_, ok, err := sc.park(&waiter{}, sc.nextWaitID(), max(d, time.Nanosecond))
	if err != nil {
		return err
	}
	if !ok {
		return ErrWaiting
	}
	return nil
}

// await parks on w as wait id (see park) and says what the wait comes to:
// the event that resolved it, ErrWaiting while it is pending (the step
// returns it), or, once its timeout passed, ErrTimeout in an error that
// begins with what() ("waiting for ...").
func (sc *stepContext) await(w *waiter, id string, timeout time.Duration, what func() string) (Event, error) {
	r, ok, err := sc.park(w, id, timeout)
	switch {
	case err != nil:
		return Event{}, err
	case !ok:
		return Event{}, ErrWaiting
	case r.timedOut:
		return Event{}, fmt.Errorf("%s: %w", what(), ErrTimeout)
	}
	return r.ev, nil
}

// nextWaitID names the run's next wait: the input event, the step and the
// wait's position, so a re-run reaches the same ids in the same order.
func (sc *stepContext) nextWaitID() string {
	x := sc.x
	id := x.item.ev.ID + "/" + sc.Step() + "/" + strconv.Itoa(x.waits)
	x.waits++
	return id
}

// park returns the result of wait id if an earlier run resolved it;
// otherwise it records w as the run's waiter (the step must then return
// ErrWaiting) and reports false.
func (sc *stepContext) park(w *waiter, id string, timeout time.Duration) (waitResult, bool, error) {
	x := sc.x
	if r, ok := x.item.resolved[id]; ok {
		return r, true, nil
	}
	if err := sc.checkWaits(); err != nil {
		return waitResult{}, false, err
	}
	if x.wait != nil {
		// The step ignored an earlier ErrWaiting; it parks at the first wait.
		return waitResult{}, false, nil
	}
	w.id, w.step = id, x.step
	if timeout > 0 {
		w.deadline = x.h.e.opts.Now().Add(timeout)
	}
	x.wait = w
	return waitResult{}, false, nil
}

// checkWaits refuses a new wait once the run has passed as many as
// Limits.MaxQueuedEvents: the run carries every earlier wait's result.
func (sc *stepContext) checkWaits() error {
	if n, limit := len(sc.x.item.resolved), sc.x.h.e.lim.MaxQueuedEvents; n >= limit {
		return sc.refuse(fmt.Errorf("step %q: %w: the run has passed %d waits, the limit (Limits.MaxQueuedEvents)", sc.Step(), ErrLimit, n))
	}
	return nil
}

// roundTrip asks the handler's loop for something and waits for the answer.
func (sc *stepContext) roundTrip(m msg) (reply, error) {
	x := sc.x
	if x.reply == nil {
		x.reply = make(chan reply, 1)
	}
	m.exec = x
	m.reply = x.reply
	if err := x.h.post(context.Background(), m); err != nil {
		return reply{}, ErrClosed
	}
	// The loop answers every message, also those it leaves behind when
	// it exits.
	r := <-x.reply
	if r.gone {
		return reply{}, ErrClosed
	}
	return r, r.err
}

// Collect carries out flow.StepContext.Collect.
func (sc *stepContext) Collect(ev Event, types ...string) ([]Event, error) {
	x := sc.x
	x.usedOnce = true
	key := sc.oncePrefix() + "\x00collect/" + strconv.Itoa(x.collects)
	x.collects++
	r, err := sc.roundTrip(msg{kind: msgCollect, p: &payload{ev: ev, key: key, types: types}})
	if errors.Is(err, ErrLimit) {
		return nil, sc.refuse(fmt.Errorf("step %q collects: %w", sc.Step(), err))
	}
	return r.events, err
}

// Get carries out flow.StepContext.Get.
func (sc *stepContext) Get(key string) (*structpb.Value, bool) {
	r, err := sc.roundTrip(msg{kind: msgGet, p: &payload{key: key}})
	if err != nil || !r.ok {
		return nil, false
	}
	return proto.Clone(r.val).(*structpb.Value), true
}

// Set carries out flow.StepContext.Set.
func (sc *stepContext) Set(key string, v *structpb.Value) error {
	if err := names.Check("the key", key, names.MaxNameBytes, true); err != nil {
		return sc.refuse(fmt.Errorf("step %q sets a value: %w", sc.Step(), err))
	}
	return sc.set(key, key, v)
}

// set stores v under key (shown as name in errors).
func (sc *stepContext) set(key, name string, v *structpb.Value) error {
	return sc.setKV(key, name, v, nil)
}

// setMemo is set of Once's value under its key k (memo, the step's
// name for it), recorded on the stream (RecordMemo).
func (sc *stepContext) setMemo(k, memo string, v *structpb.Value) error {
	return sc.setKV(k, "Once "+memo, v, &Memo{Step: sc.Step(), Key: memo, Value: v})
}

func (sc *stepContext) setKV(key, name string, v *structpb.Value, memo *Memo) error {
	if v != nil {
		if err := pl.CheckValue(sc.x.h.e.lim.payload(), "value", v); err != nil {
			return sc.refuse(fmt.Errorf("step %q sets %q: %w", sc.Step(), name, err))
		}
		v = proto.Clone(v).(*structpb.Value)
	}
	if memo != nil {
		memo.Value = v
	}
	_, err := sc.roundTrip(msg{kind: msgSet, p: &payload{key: key, val: v, memo: memo}})
	if errors.Is(err, ErrLimit) {
		return sc.refuse(fmt.Errorf("step %q sets %q: %w", sc.Step(), name, err))
	}
	return err
}

// SetAttributes carries out flow.StepContext.SetAttributes.
func (sc *stepContext) SetAttributes(update *structpb.Struct) error {
	set, err := sc.x.h.st.wf.def.Attributes.Convert(update)
	if err != nil {
		return sc.refuse(fmt.Errorf("step %q sets search attributes: %w: %w", sc.Step(), ErrInvalidPayload, err))
	}
	if len(set) == 0 {
		return nil
	}
	_, err = sc.roundTrip(msg{kind: msgSetAttrs, p: &payload{attrs: set}})
	return err
}

// Once carries out flow.StepContext.Once.
func (sc *stepContext) Once(key string, fn func() (*structpb.Value, error)) (*structpb.Value, error) {
	sc.x.usedOnce = true
	if err := names.Check("the key", key, names.MaxNameBytes, true); err != nil {
		return nil, sc.refuse(fmt.Errorf("step %q: Once: %w", sc.Step(), err))
	}
	k := sc.oncePrefix() + key
	if v, ok := sc.Get(k); ok {
		return v, nil
	}
	v, err := fn()
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = structpb.NewNullValue()
	}
	if err := sc.setMemo(k, key, v); err != nil {
		return nil, err
	}
	return v, nil
}

func (sc *stepContext) oncePrefix() string {
	return onceKeyPrefix(sc.Step(), sc.x.item.ev.ID)
}

func onceKeyPrefix(step, eventID string) string {
	return "\x00once/" + step + "/" + eventID + "/"
}

// Rewind carries out flow.StepContext.Rewind.
func (sc *stepContext) Rewind() {
	x := sc.x
	x.sent, x.written, x.wait = nil, nil, nil
	x.waits, x.collects, x.childN = 0, 0, 0
}

// Blocked carries out flow.StepContext.Blocked.
func (sc *stepContext) Blocked(on string) {
	_, _ = sc.roundTrip(msg{kind: msgBlocked, p: &payload{key: on}})
}

// ResolvedWaits carries out flow.StepContext.ResolvedWaits.
func (sc *stepContext) ResolvedWaits() []ResolvedWait {
	x := sc.x
	if len(x.item.resolved) == 0 {
		return nil
	}
	prefix := x.item.ev.ID + "/" + sc.Step() + "/"
	out := make([]ResolvedWait, 0, len(x.item.resolved))
	for id, r := range x.item.resolved {
		rest, ok := strings.CutPrefix(id, prefix)
		if !ok {
			continue
		}
		pos, err := strconv.Atoi(rest)
		if err != nil {
			continue
		}
		out = append(out, ResolvedWait{Position: pos, Event: r.ev, TimedOut: r.timedOut})
	}
	slices.SortFunc(out, func(a, b ResolvedWait) int { return a.Position - b.Position })
	return out
}

// WaitPosition carries out flow.StepContext.WaitPosition.
func (sc *stepContext) WaitPosition() int { return sc.x.waits }
