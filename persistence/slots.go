package persistence

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"
)

// Slots keeps the concurrency keys of workflows: for each key, the
// handlers that hold one of its slots (admitted: they run) and the queue
// of those waiting for one, in order, with what its rate limit
// remembers. Every change of a key is one atomic UpdateSlots, serialised
// with every other change of that key across replicas, so two replicas
// never admit more handlers than the key allows.
//
// The store applies the rules itself (backend.ApplySlots, shared by every
// backend) because they must hold inside the transaction: it cannot hand
// a key's state out and take it back.
type Slots interface {
	// UpdateSlots applies c to key k: it removes c.Release, adds
	// c.Enqueue at the queue's tail, then admits handlers from the head of
	// the queue while c.Limit allows. A key with neither holders nor
	// queue is not kept.
	UpdateSlots(ctx context.Context, k SlotKey, c SlotChange) (SlotResult, error)

	// SlotOf returns where handler id stands in key k: 0 if it holds a
	// slot, n ≥ 1 if it is n-th in the queue; ErrNotFound if neither.
	SlotOf(ctx context.Context, k SlotKey, id string) (int, error)

	// ListSlots returns key k's holders (oldest admission first) and up to
	// limit of its queue, from the head (limit <= 0: DefaultScanLimit).
	ListSlots(ctx context.Context, k SlotKey, limit int) (holders, queue []SlotEntry, err error)

	// SlotKeys returns up to limit keys after after (in the order of
	// workflow, then key; the zero SlotKey starts at the first), with
	// their counts: how a sweep visits every key.
	SlotKeys(ctx context.Context, after SlotKey, limit int) ([]SlotKeyInfo, error)

	// DueSlots returns up to limit keys whose queue's head the rate limit
	// lets in at or before before, earliest first.
	DueSlots(ctx context.Context, before time.Time, limit int) ([]SlotKey, error)

	// PendingSlots returns up to limit holders admitted from a queue that
	// were not yet told (SlotChange.Delivered), oldest admission first:
	// what a replica that could not tell one at once, or crashed before
	// it did, does next.
	PendingSlots(ctx context.Context, limit int) ([]SlotPending, error)
}

// SlotPending is a holder admitted from its key's queue and not yet told.
type SlotPending struct {
	SlotKey
	SlotEntry
}

// SlotKey names one concurrency key of a workflow: the handlers of
// Workflow whose input gives Key share its slots.
type SlotKey struct {
	Workflow string
	Key      string
}

func (k SlotKey) String() string { return fmt.Sprintf("%s[%q]", k.Workflow, k.Key) }

// Limits of a SlotKey.
const (
	MaxSlotKeyLen = 256 // SlotKey.Key, in bytes
	MaxSlotRate   = 10000
	MaxSlotMax    = 100000
)

// Validate reports whether k may be stored; the error wraps ErrInvalid.
func (k SlotKey) Validate() error {
	switch {
	case k.Workflow == "":
		return fmt.Errorf("%w: concurrency key: no workflow", ErrInvalid)
	case len(k.Key) > MaxSlotKeyLen:
		return fmt.Errorf("%w: concurrency key of %s: %d bytes, more than %d", ErrInvalid, k.Workflow, len(k.Key), MaxSlotKeyLen)
	case !utf8.ValidString(k.Key) || !utf8.ValidString(k.Workflow):
		return fmt.Errorf("%w: concurrency key of %s: not UTF-8", ErrInvalid, k.Workflow)
	}
	return nil
}

// SlotLimit is what a key allows: at most Max handlers hold a slot at
// once (0: no maximum), and at most Rate are admitted within any Per
// (Rate 0: no rate limit).
type SlotLimit struct {
	Max  int
	Rate int
	Per  time.Duration
}

// Validate reports whether l is a limit; the error wraps ErrInvalid.
func (l SlotLimit) Validate() error {
	switch {
	case l.Max < 0 || l.Max > MaxSlotMax:
		return fmt.Errorf("%w: concurrency limit: max %d, want 0 to %d", ErrInvalid, l.Max, MaxSlotMax)
	case l.Rate < 0 || l.Rate > MaxSlotRate:
		return fmt.Errorf("%w: concurrency limit: rate %d, want 0 to %d", ErrInvalid, l.Rate, MaxSlotRate)
	case l.Rate > 0 && l.Per <= 0:
		return fmt.Errorf("%w: concurrency limit: a rate without an interval", ErrInvalid)
	}
	return nil
}

// SlotChange is one atomic change of a key.
type SlotChange struct {
	// Release removes this handler from the key, holding or queued ("":
	// none). An absent one is no error: a release may be repeated.
	Release string
	// Enqueue adds this handler at the tail of the queue ("": none). One
	// that holds a slot or is queued already stays where it is
	// (SlotResult.Existed).
	Enqueue string
	// Delivered: this holder was told it is admitted (it is no longer
	// pending).
	Delivered string
	// Refuse: Enqueue is added only if it is admitted at once; otherwise
	// nothing changes and SlotResult.Refused is set.
	Refuse bool
	// Limit is the key's limit now (the current version's declaration).
	Limit SlotLimit
	// Hold admits no one (a writer that does not know the key's limit:
	// the zero Limit would admit everyone).
	Hold bool
	// Now is the change's time: of an admission, and for the rate limit.
	Now time.Time
}

// SlotResult is what UpdateSlots did.
type SlotResult struct {
	// Admitted lists the handlers the change moved from the queue to the
	// holders, in queue order: each is pending until a change says it was
	// Delivered. Enqueue's own id is not among them: admitted at once, it
	// is Position 0 and not pending (its caller starts it admitted).
	Admitted []string
	// Position is Enqueue's place after the change: 0 holding, n ≥ 1
	// n-th in the queue.
	Position int
	// Existed: Enqueue held a slot or was queued before the change.
	Existed bool
	// Refused: Refuse was set and Enqueue could not be admitted at once.
	Refused bool
	// NextDue is when the rate limit next lets the queue's head in, or
	// for a refused Enqueue the earliest a retry may be let in (zero: the
	// queue does not wait on the rate).
	NextDue time.Time
	// Holding and Queued count the key's handlers after the change.
	Holding, Queued int
}

// SlotEntry is a handler in a key: since when it holds its slot, or since
// when it is queued.
type SlotEntry struct {
	HandlerID string
	At        time.Time
	// Pending: a holder admitted from the queue and not yet told.
	Pending bool
}

// SlotKeyInfo is a key with its counts.
type SlotKeyInfo struct {
	SlotKey
	Holding, Queued int
	NextDue         time.Time
}
