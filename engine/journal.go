package engine

import (
	"time"

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
type Journal interface {
	Append(c *Change)
}

// Change is one batch of a handler's changes: the records it produced and
// where the handler stands afterwards.
type Change struct {
	HandlerID string
	Workflow  string
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
	// Parent started this handler ("" for none). Children lists the
	// handlers it started, in order (shared between changes: read only).
	Parent   string
	Children []string

	st *state // valid only during Append
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

// Done acknowledges the change: err is nil when it is durable.
func (c *Change) Done(err error) {
	for _, a := range c.acks {
		a <- err
	}
	c.acks = nil
}
