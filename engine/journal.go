package engine

import (
	"time"

	"github.com/wfd-dev/wfd/attrs"

	"google.golang.org/protobuf/types/known/structpb"

	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
)

// Journal receives every change of every handler. The engine calls Append on
// the handler's owner goroutine, once per batch of changes, in order; a
// journal that persists changes typically encodes the snapshot there and
// commits asynchronously, sharing commits between handlers.
//
// A journal must call Change.Done exactly once per change, from any
// goroutine, when the change is durable (or failed to be): callers of
// Engine.Start and Handler.SendEvent are acknowledged only then.
//
// A change that fails (Done with an error) makes the handler lost: it
// leaves memory without that change and without anything it did after it
// (ErrLost), and is restored from its last durable checkpoint by whoever
// needs it next. Its later changes build on the one that failed, so the
// journal must make none of them durable: it fails them instead (Done
// with an error that wraps ErrLost). Once the failed change is
// acknowledged, Change.Lost reports it on the changes the handler had
// already handed over; the changes committed together with the failed
// one the journal must tell apart itself.
type Journal interface {
	Append(c *Change)
}

// Change is one batch of a handler's changes: the records it produced and
// where the handler stands afterwards.
type Change struct {
	HandlerID string
	Workflow  string
	// WorkflowVersion is the version of Workflow the handler runs.
	WorkflowVersion string
	// Created is set on the first change of a handler made by Engine.Start.
	Created bool
	// Released is set on the last change of a handler that Handler.Release
	// took out of memory; the snapshot is the one to keep.
	Released    bool
	Status      Status
	Idle        *Idle // nil when busy
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CompletedAt time.Time
	// Deadline is the end of the whole-workflow timeout (zero: none).
	Deadline time.Time
	Result   *structpb.Struct
	Error    string
	// Records are new since the previous change, in sequence order.
	Records []Record
	// Waiters are all the handler's waiters now (busy or idle).
	Waiters []WaiterInfo
	// NewWaiters were added, Resolved were resolved (by an event or their
	// deadline) and Dropped were discarded (the handler ended) since the
	// previous change.
	NewWaiters []WaiterInfo
	Resolved   []Resolution
	Dropped    []WaiterInfo
	// ChangedTasks are the pending tasks a TaskUpdateEvent changed since
	// the previous change (claimed, reassigned, commented on), as they
	// stand now.
	ChangedTasks []WaiterInfo
	// Parent started this handler ("" for none). Children lists the
	// handlers it started, in order (shared between changes: read only).
	Parent   string
	Children []string
	// Attributes are the handler's search attributes now (shared between
	// changes: read only).
	Attributes attrs.Set
	// Slot is the handler's concurrency key now (nil: none).
	Slot *Slot

	st *state // valid only during Append
	// h is the handler the change is of: Done makes it lost on an error.
	h *Handler
	// acks are the callers waiting for the change to be durable; each
	// gets Done's error.
	acks []chan<- error
}

// Snapshot returns the handler's state as of this change, to checkpoint.
// It may only be called during Journal.Append, which runs on the handler's
// owner goroutine.
//
// A finished handler is never restored, so its snapshot keeps only what
// can still be asked of it: its identity, status and timestamps, and the
// idempotency keys of its last events from outside (a retried SendEvent
// is answered from them). Its result is in the change (Change.Result) and
// on its terminal record; its queues, waiters, key/value store and input
// are gone.
func (c *Change) Snapshot() *statev1.HandlerState {
	if c.st == nil {
		panic("engine: Change.Snapshot called outside Journal.Append")
	}
	if c.st.status.Terminal() {
		return c.st.finishedProto()
	}
	return c.st.toProto()
}

// Lost reports whether an earlier change of the handler has been
// acknowledged with an error: the handler is lost (ErrLost), and this
// change, which it handed over before it knew, must not be made durable.
func (c *Change) Lost() bool {
	return c.h != nil && c.h.lost.Load()
}

// Done acknowledges the change: err is nil when it is durable. An error
// makes the handler lost (see Journal) before the callers get it.
func (c *Change) Done(err error) {
	if err != nil && c.h != nil {
		c.h.lose()
	}
	for _, a := range c.acks {
		a <- err
	}
	c.acks = nil
	if c.h != nil {
		c.h.journalDone(err)
	}
}
