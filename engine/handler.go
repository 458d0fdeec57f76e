package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wfd-dev/wfd/attrs"

	"google.golang.org/protobuf/types/known/structpb"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"

	pl "github.com/wfd-dev/wfd/internal/payload"
)

// Handler is a live run of a workflow. Its methods send messages to the
// handler's control loop, which owns the state; they are safe for
// concurrent use.
type Handler struct {
	e *Engine
	// st is the handler's state. Its id and workflow never change; the rest
	// belongs to the loop, and is frozen (readable by anyone) once the
	// handler has left memory.
	st *state

	// mu guards the inbox and the loop's life: whether a loop goroutine runs
	// (it parks when the handler has nothing in progress), and why it ended
	// for good. The inbox and the channels below are made only when used,
	// so an idle handler in memory holds none.
	mu    sync.Mutex
	inbox *mailbox
	// signal wakes a running loop that waits for a message.
	signal chan struct{}
	// space is closed when a full inbox gets room.
	space chan struct{}
	// done is closed when the loop has exited (see Done).
	done    chan struct{}
	running bool
	exit    exitReason
	// aborted makes a stopping loop give up on running steps.
	aborted bool
	// lost is set (under mu) once a change of the handler could not be
	// made durable (lose); the loop reads it without the lock before it
	// hands the journal anything.
	lost atomic.Bool
	// inJournal counts the changes handed to the journal and not yet
	// acknowledged; refusals are the SendEvent refusals waiting for them
	// (refuseWhenDurable). Both under mu.
	inJournal int32
	refusals  *[]refusal

	// The rest belongs to the loop goroutine, which parks and starts again
	// under mu, so one goroutine at a time uses it.
	lc loopState
}

type exitReason uint8

const (
	exitTerminal exitReason = iota + 1
	exitReleased
	exitStopped
	// exitLost: a change could not be made durable (lose).
	exitLost
)

// Info is a handler's status at one moment.
type Info struct {
	ID       string
	Workflow string
	// WorkflowVersion is the version of Workflow the handler runs.
	WorkflowVersion string
	Status          Status
	CreatedAt       time.Time
	CompletedAt     time.Time
	// Idle is nil while the handler is busy or finished.
	Idle   *Idle
	Result *structpb.Struct
	Error  string
	// Seq is the sequence number of the handler's latest stream record.
	Seq uint64
	// Attributes are its search attributes (shared: read only).
	Attributes attrs.Set
	// Slot is its concurrency key (nil: its workflow limits none).
	Slot *Slot
}

type msgKind uint8

const (
	msgStart msgKind = iota + 1
	msgDone
	msgSend
	msgCancel
	msgSnapshot
	msgRelease
	msgInfo
	msgStop
	msgGet
	msgSet
	msgCollect
	msgTimer
	msgAddChild
	msgChildren
	msgBlocked
	msgUpgrade
	msgSetAttrs
)

// msg is the one type the control loop receives. It travels by value, so
// sending it allocates nothing.
type msg struct {
	kind  msgKind
	exec  *execution
	err   error
	p     *payload // for the kinds that carry data
	ack   chan<- error
	reply chan<- reply
}

// payload is the data of the rarer messages. Keeping it out of msg keeps
// the inbox small, which every handler in memory carries.
type payload struct {
	ev    Event
	key   string
	val   *structpb.Value
	types []string
	// fromWfd: a send with SendOptions.FromWfd.
	fromWfd bool
	// wf is the version an upgrade moves to (msgUpgrade).
	wf *compiled
	// initial are the events a start delivers with the creation (msgStart).
	initial []InitialEvent
	// attrs is a step's update of the search attributes (msgSetAttrs).
	attrs attrs.Set
	// memo, with msgSet, records the value as a Once memo (RecordMemo).
	memo *Memo
}

type reply struct {
	err      error
	val      *structpb.Value
	ok       bool
	events   []Event
	state    *statev1.HandlerState
	info     Info
	children map[string]ChildResult
	// gone: the loop exited without handling the message.
	gone bool
}

func newHandler(e *Engine, s *state) *Handler {
	return &Handler{e: e, st: s, lc: loopState{timed: true}}
}

// ID returns the handler's id.
func (h *Handler) ID() string { return h.st.id }

// Workflow returns the name of the handler's workflow.
func (h *Handler) Workflow() string { return h.st.wf.def.Name }

// Done is closed when the handler has left memory: it finished, was
// released, was lost (a change of it could not be made durable: ErrLost),
// or the engine closed.
func (h *Handler) Done() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done == nil {
		h.done = make(chan struct{})
		if h.exit != 0 {
			close(h.done)
		}
	}
	return h.done
}

// exited reports whether the loop has exited for good; st is then frozen.
func (h *Handler) exited() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exit != 0
}

// answersFromState reports whether calls that read the handler may answer
// from its state because its loop has gone: not if it was lost, since
// that state holds what never became durable.
func (h *Handler) answersFromState() bool {
	return h.exited() && !h.lost.Load()
}

// lose marks the handler lost: a change of it could not be made durable
// (Change.Done with an error). Callers get ErrLost from now on, the loop
// hands the journal nothing more and exits (see settle), and
// Engine.Handler no longer returns the handler, which is loaded again from
// its last durable checkpoint by whoever needs it. It runs before the
// failed change's callers are answered, so one that retries cannot reach
// this handler without being told.
func (h *Handler) lose() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost.Load() {
		return
	}
	h.lost.Store(true)
	if h.exit != 0 {
		return // the loop has exited already (the change ended or released the handler)
	}
	// The loop must see the mark: start it if parked, wake it if it waits.
	h.wakeLocked()
}

// Drop makes the handler lost without a failed change: it is no longer
// this process's to run (another replica took its lease, server/lease.go).
// Callers get ErrLost (an ErrReleased), its changes still queued are not
// committed, and it leaves memory as a lost handler does.
func (h *Handler) Drop() { h.lose() }

// afterExit is the answer of a handler whose loop has gone.
func (h *Handler) afterExit() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exitErrLocked()
}

func (h *Handler) exitErrLocked() error {
	if h.lost.Load() {
		return fmt.Errorf("%w: %s", ErrLost, h.st.id)
	}
	switch h.exit {
	case exitTerminal:
		return errHandlerDone(h.st.id, h.st.status)
	case exitReleased:
		return fmt.Errorf("%w: %s", ErrReleased, h.st.id)
	}
	return ErrClosed
}

// call sends m to the loop and waits for its reply. The loop answers every
// message it takes, and the ones it leaves behind when it exits.
func (h *Handler) call(ctx context.Context, m msg) (reply, error) {
	ch := make(chan reply, 1)
	m.reply = ch
	if err := h.post(ctx, m); err != nil {
		return reply{}, err
	}
	select {
	case r := <-ch:
		return r, r.err
	case <-ctx.Done():
		return reply{}, ctx.Err()
	}
}

// SendEvent delivers an event from outside. The workflow must accept its
// type from outside, or a waiter of the handler must wait for it; otherwise
// the error is an EventRefusedError (ErrInvalidEvent). Data that does not
// match the schema the workflow declares for the type (Workflow.Events) is
// a SchemaError (ErrInvalidEvent). It returns once the journal has
// acknowledged the change that holds the event.
//
// An event CheckEvent refuses is refused first, whatever the handler's
// state: without SendOptions.FromWfd a reserved type is ErrInvalidEvent and
// data that breaks the payload rules ErrInvalidPayload. An event that would
// make the handler hold more than Limits.MaxQueuedEvents is ErrLimit, and
// one for a handler that has ended a HandlerDoneError (ErrHandlerDone).
func (h *Handler) SendEvent(ctx context.Context, ev Event, opts SendOptions) error {
	if err := h.e.CheckEvent(ev, opts); err != nil {
		return err
	}
	if opts.FromWfd {
		ev.Data = pl.Sanitize(ev.Data)
	}
	ack := make(chan error, 1)
	p := &payload{ev: ev, key: opts.IdempotencyKey, fromWfd: opts.FromWfd}
	if _, err := h.call(ctx, msg{kind: msgSend, p: p, ack: ack}); err != nil {
		if !judgedOnState(err) || !h.refuseWhenDurable(ack, err) {
			return err
		}
		// The handler ended (its loop has gone) with its last changes
		// still in the journal's hands: the refusal waits for them.
	}
	select {
	case err := <-ack:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cancel ends the handler as cancelled; runs in progress see their context
// cancelled and their results are dropped.
func (h *Handler) Cancel(ctx context.Context) error {
	ack := make(chan error, 1)
	if _, err := h.call(ctx, msg{kind: msgCancel, ack: ack}); err != nil {
		return err
	}
	select {
	case err := <-ack:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Snapshot returns the handler's state. After the handler has left memory it
// returns the state it left with; a lost handler's is ErrLost, since it
// holds what never became durable.
func (h *Handler) Snapshot(ctx context.Context) (*statev1.HandlerState, error) {
	r, err := h.call(ctx, msg{kind: msgSnapshot})
	if err != nil {
		if h.answersFromState() {
			return h.st.toProto(), nil
		}
		return nil, err
	}
	return r.state, nil
}

// Release takes an idle handler out of memory and returns its snapshot; the
// stream gets a RecordReleased and the journal a last change marked Released.
// It returns once the journal has acknowledged that change. A handler that is
// not idle is ErrNotIdle.
func (h *Handler) Release(ctx context.Context) (*statev1.HandlerState, error) {
	ack := make(chan error, 1)
	r, err := h.call(ctx, msg{kind: msgRelease, ack: ack})
	if err != nil {
		return nil, err
	}
	select {
	case err := <-ack:
		if err != nil {
			return nil, err
		}
		return r.state, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Info returns the handler's status (after it has left memory, its last;
// ErrLost for a lost handler).
func (h *Handler) Info(ctx context.Context) (Info, error) {
	r, err := h.call(ctx, msg{kind: msgInfo})
	if err != nil {
		if h.answersFromState() {
			return h.st.info(), nil
		}
		return Info{}, err
	}
	return r.info, nil
}

// Wait blocks until the handler leaves memory and returns its final Info;
// ErrLost if a change of it could not be made durable.
func (h *Handler) Wait(ctx context.Context) (Info, error) {
	select {
	case <-h.Done():
		if h.lost.Load() {
			return Info{}, fmt.Errorf("%w: %s", ErrLost, h.st.id)
		}
		return h.st.info(), nil
	case <-ctx.Done():
		return Info{}, ctx.Err()
	}
}
