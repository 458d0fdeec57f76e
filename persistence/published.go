package persistence

import (
	"fmt"
	"time"
)

// Published is one entry of the store's published-event log: an event
// published to a key, for every handler (global) or for one, that a
// handler starting to wait later can still find (Store.FindPublished).
// Entries are immutable and only ever appended.
//
// Times are stored with nanosecond precision and returned in UTC.
type Published struct {
	// Seq is the entry's position in the log, assigned by Store.Publish:
	// global and increasing in commit order. The value a caller sets is
	// ignored.
	Seq uint64
	// ID is assigned by the caller (a UUIDv7) and makes Publish
	// idempotent: publishing an ID again returns the first entry.
	ID string
	// Key is what waiters wait for (Waiter.Key); it must not be empty.
	Key string
	// HandlerID addresses the event to one handler; "" makes it global.
	HandlerID string
	Data      []byte // opaque
	// At is when the event was published; FindPublished compares it with
	// a waiter's start. It must be set.
	At time.Time
}

// Validate reports whether p may be published. The error wraps ErrInvalid.
// Seq is not checked: the store assigns it.
func (p *Published) Validate() error {
	if err := checkName("published id", p.ID, MaxIDLen, true); err != nil {
		return err
	}
	if err := checkName("published key", p.Key, MaxKeyLen, true); err != nil {
		return fmt.Errorf("published %q: %w", p.ID, err)
	}
	if err := checkName("published handler id", p.HandlerID, MaxIDLen, false); err != nil {
		return fmt.Errorf("published %q: %w", p.ID, err)
	}
	if p.At.IsZero() {
		return fmt.Errorf("%w: published %q: At is not set", ErrInvalid, p.ID)
	}
	if err := checkTime("At", p.At); err != nil {
		return fmt.Errorf("published %q: %w", p.ID, err)
	}
	return nil
}

// ValidatePublishedFilter reports whether key and handlerID may be passed
// to Store.FindPublished: key follows the rules of Published.Key, handlerID
// those of Published.HandlerID. The error wraps ErrInvalid.
func ValidatePublishedFilter(key, handlerID string) error {
	if err := checkName("published key", key, MaxKeyLen, true); err != nil {
		return err
	}
	return checkName("published handler id", handlerID, MaxIDLen, false)
}
