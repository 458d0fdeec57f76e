package persistence

import (
	"fmt"
	"strings"
	"time"

	"github.com/wfd-dev/wfd/attrs"
)

// Handler is the metadata of one handler run: everything listing, filtering
// and waking need, without the engine's state (the snapshot) or the stream.
//
// Times are stored with nanosecond precision and returned in UTC.
type Handler struct {
	// ID identifies the handler. wfd generates UUIDv7 strings, but callers
	// may choose any id, so listings order by CreatedAt, not by ID.
	ID       string
	Workflow string
	// WorkflowVersion is the version of Workflow the handler runs: the one
	// it started on ("" for handlers stored before workflows had versions).
	WorkflowVersion string
	Status          Status
	// Residency and Owner say whether, and where, the handler is live.
	Residency Residency
	// Owner is the replica that holds the handler live; "" means nobody.
	Owner string

	CreatedAt   time.Time
	UpdatedAt   time.Time
	CompletedAt time.Time // zero until the handler is terminal
	// IdleSince is when the handler last became idle; zero means it is not
	// idle. Idle handlers are indexed by this time.
	IdleSince time.Time
	// Waiters are what the handler waits for. Their Deadlines are indexed
	// as timers and their Keys in the waiter index.
	Waiters []Waiter
	// External lists the event types the handler accepts from outside
	// while it is idle (besides what its waiters wait for).
	External []string
	// Deadline, if not zero, is the end of the handler's whole-run timeout.
	// It is indexed as a timer whose WaiterID is "" (see Store.DueTimers),
	// so that a released handler is woken when it passes.
	Deadline time.Time

	Error  string // why the handler failed, if it did
	Result []byte // opaque result (JSON or protobuf bytes)
	Parent string // parent handler id, "" for a top-level handler
	// Children are the handlers this one started, in order.
	Children []string
	// Attributes are the handler's search attributes (attrs.Set: typed,
	// no null values), set at start and updated by its steps. The store
	// indexes them for ListHandlers' Query.Where, under Workflow (an
	// attribute's name means something within its workflow only).
	Attributes attrs.Set
	// Slot is the handler's concurrency key (nil: its workflow limits
	// none); the key's holders and queue are in Slots.
	Slot *HandlerSlot

	// LastSeq is the sequence number of the last record on the handler's
	// stream (0 when it has none). The store maintains it from the records
	// each Change appends; the value a writer sets is ignored.
	LastSeq uint64
	// Revision identifies the stored state of the handler: every Write
	// that changes its metadata, snapshot or records sets it to a number
	// no other write of the store used (the id of the store's
	// transaction), so two reads with the same Revision read the same
	// state, and Change.IfRevision can make a write conditional on what
	// its writer read. The store maintains it; the value a writer sets is
	// ignored. Metadata written before revisions existed reads as 0.
	Revision uint64
}

// HandlerSlot is a handler's concurrency key, and whether it still waits
// in the key's queue.
type HandlerSlot struct {
	Key    string
	Queued bool
}

// Waiter is one event a handler waits for.
type Waiter struct {
	// ID identifies the waiter within its handler; it must be unique there.
	ID        string
	Step      string
	EventType string
	// Match is an opaque match specification for the engine.
	Match []byte
	// Deadline, if not zero, is indexed as a timer (see Store.DueTimers).
	Deadline time.Time
	// Key, if not "", indexes the waiter for Store.WaitingFor, e.g.
	// "event-type" or "child-done/<child id>".
	Key string
}

// Limits on the strings that backends use inside index keys. They keep keys
// short and let backends separate key parts with a 0 byte.
const (
	MaxIDLen       = 256          // Handler.ID, Handler.Parent, Waiter.ID, Task.HandlerID, Published.ID and Published.HandlerID
	MaxWorkflowLen = 256          // Handler.Workflow and Task.Workflow
	MaxKeyLen      = 1024         // Waiter.Key and Published.Key
	MaxOwnerLen    = 256          // Handler.Owner, Change.IfOwner and WorkflowDef.Owner
	MaxTaskIDLen   = 2 * MaxIDLen // Task.ID, room for "<handler id>:<waiter id>"
	MaxAssigneeLen = 256          // Task.Assignee
)

// Validate reports whether h may be stored. The error wraps ErrInvalid.
func (h *Handler) Validate() error {
	if err := checkName("handler id", h.ID, MaxIDLen, true); err != nil {
		return err
	}
	if err := checkName("workflow", h.Workflow, MaxWorkflowLen, true); err != nil {
		return err
	}
	// The version is part of index keys (CountVersions), as the workflow is.
	if err := checkName("workflow version", h.WorkflowVersion, MaxVersionLen, false); err != nil {
		return err
	}
	if err := checkName("parent", h.Parent, MaxIDLen, false); err != nil {
		return err
	}
	for _, c := range h.Children {
		if err := checkName("child", c, MaxIDLen, true); err != nil {
			return err
		}
	}
	if len(h.Owner) > MaxOwnerLen {
		return fmt.Errorf("%w: owner is longer than %d bytes", ErrInvalid, MaxOwnerLen)
	}
	if !h.Status.Valid() {
		return fmt.Errorf("%w: handler %q: invalid status %v", ErrInvalid, h.ID, h.Status)
	}
	if !h.Residency.Valid() {
		return fmt.Errorf("%w: handler %q: invalid residency %v", ErrInvalid, h.ID, h.Residency)
	}
	for _, t := range []struct {
		name string
		t    time.Time
	}{{"CreatedAt", h.CreatedAt}, {"UpdatedAt", h.UpdatedAt}, {"CompletedAt", h.CompletedAt}, {"IdleSince", h.IdleSince}, {"Deadline", h.Deadline}} {
		if err := checkTime(t.name, t.t); err != nil {
			return fmt.Errorf("handler %q: %w", h.ID, err)
		}
	}
	if err := h.validateAttributes(); err != nil {
		return err
	}
	for _, t := range h.External {
		if err := checkName("external event type", t, MaxKeyLen, true); err != nil {
			return fmt.Errorf("handler %q: %w", h.ID, err)
		}
	}
	seen := make(map[string]struct{}, len(h.Waiters))
	for i := range h.Waiters {
		w := &h.Waiters[i]
		if err := checkName("waiter id", w.ID, MaxIDLen, true); err != nil {
			return fmt.Errorf("handler %q: waiter %d: %w", h.ID, i, err)
		}
		if err := checkName("waiter key", w.Key, MaxKeyLen, false); err != nil {
			return fmt.Errorf("handler %q: waiter %q: %w", h.ID, w.ID, err)
		}
		if err := checkTime("Deadline", w.Deadline); err != nil {
			return fmt.Errorf("handler %q: waiter %q: %w", h.ID, w.ID, err)
		}
		if _, dup := seen[w.ID]; dup {
			return fmt.Errorf("%w: handler %q: duplicate waiter id %q", ErrInvalid, h.ID, w.ID)
		}
		seen[w.ID] = struct{}{}
	}
	return nil
}

// validateAttributes checks h.Attributes: what Encode would refuse, no
// store can keep or index.
func (h *Handler) validateAttributes() error {
	if len(h.Attributes) == 0 {
		return nil
	}
	if err := h.Attributes.Check(); err != nil {
		return fmt.Errorf("%w: handler %q: attributes: %w", ErrInvalid, h.ID, err)
	}
	return nil
}

// checkName validates a string that backends put inside index keys.
func checkName(what, s string, maxLen int, required bool) error {
	switch {
	case s == "" && required:
		return fmt.Errorf("%w: %s is empty", ErrInvalid, what)
	case len(s) > maxLen:
		return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalid, what, maxLen)
	case strings.IndexByte(s, 0) >= 0:
		// Backends separate key parts with a 0 byte; one inside a part
		// would make two different keys collide.
		return fmt.Errorf("%w: %s %q contains a NUL byte", ErrInvalid, what, s)
	}
	return nil
}

// checkTime keeps times within years 1 to 9999, the range every backend's
// encoding (RFC 3339, protobuf Timestamp) can represent.
func checkTime(what string, t time.Time) error {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return fmt.Errorf("%w: %s %v is outside years 1 to 9999", ErrInvalid, what, t)
	}
	return nil
}
