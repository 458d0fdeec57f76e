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
	// PublishedBy is who published it (the caller's subject when the
	// server authenticates callers); "" for nobody known.
	PublishedBy string
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
	if len(p.PublishedBy) > MaxSubjectLen {
		return fmt.Errorf("%w: published %q: PublishedBy is longer than %d bytes", ErrInvalid, p.ID, MaxSubjectLen)
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

// MaxSubjectLen bounds Published.PublishedBy.
const MaxSubjectLen = 1024

// PublishedQuery selects entries of the published-event log for
// Store.ListPublished. Filters combine with AND; the zero query lists the
// whole log. Results are latest first: by At, ties by Seq (both
// descending). Every filter is answered from an index, so listing one
// key's or one handler's latest entries does not scan the log.
type PublishedQuery struct {
	// Key, if not "", keeps entries published under that key.
	Key string
	// HandlerID, if not "", keeps entries addressed to that handler alone
	// (global entries are left out).
	HandlerID string
	// Since, if not zero, keeps entries whose At is at or after it.
	Since time.Time
	// PageSize is the maximum number of entries returned: 0 means
	// DefaultPageSize, and values above MaxPageSize are lowered to it.
	PageSize int
	// PageToken continues a previous listing with the same filters; ""
	// starts from the latest entry. A page continues after the last entry
	// of the previous one, so entries published meanwhile do not appear.
	PageToken string
}

// Validate reports whether q is well formed. The error wraps ErrInvalid.
// It does not check PageToken, whose format belongs to each backend.
func (q *PublishedQuery) Validate() error {
	if err := checkName("published key", q.Key, MaxKeyLen, false); err != nil {
		return err
	}
	if err := checkName("published handler id", q.HandlerID, MaxIDLen, false); err != nil {
		return err
	}
	if !q.Since.IsZero() {
		if err := checkTime("since", q.Since); err != nil {
			return err
		}
	}
	if q.PageSize < 0 {
		return fmt.Errorf("%w: published query: negative PageSize %d", ErrInvalid, q.PageSize)
	}
	return nil
}

// Limit returns the effective page size.
func (q *PublishedQuery) Limit() int { return pageLimit(q.PageSize) }
