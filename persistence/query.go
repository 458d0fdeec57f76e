package persistence

import (
	"fmt"
	"time"
)

// Page sizes for Store.ListHandlers and Store.ListTasks.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// Query selects handlers for Store.ListHandlers. Filters combine with AND;
// the zero Query lists every handler. Results are newest first: by
// CreatedAt, ties by ID (also descending), whatever the ids are, since
// callers may choose them.
type Query struct {
	// Workflow, if not "", keeps handlers of that workflow.
	Workflow string
	// Version, if not "", keeps handlers whose WorkflowVersion is Version
	// (handlers stored before versions have ""). It needs Workflow: a
	// version means nothing without its workflow, and the indexes that
	// answer it are by workflow first.
	Version string
	// Statuses, if not empty, keeps handlers in any of these statuses.
	Statuses []Status
	// IdleOnly keeps idle handlers (IdleSince not zero).
	IdleOnly bool
	// IdleFor, if positive, keeps handlers idle since at least IdleFor
	// before Now. It implies IdleOnly.
	IdleFor time.Duration
	// Now is the reference time for IdleFor; zero means the current time.
	Now time.Time
	// Residency, if not 0, keeps handlers with that residency.
	Residency Residency
	// PageSize is the maximum number of handlers returned: 0 means
	// DefaultPageSize, and values above MaxPageSize are lowered to it.
	PageSize int
	// PageToken continues a previous listing with the same filters; "" starts
	// from the newest handler. A page continues after the last handler of the
	// previous one (its position by creation time), so handlers created
	// meanwhile do not appear, and changes to listed handlers move nothing.
	PageToken string
}

// Validate reports whether q is well formed. The error wraps ErrInvalid.
// It does not check PageToken, whose format belongs to each backend.
func (q *Query) Validate() error {
	if q.Version != "" && q.Workflow == "" {
		return fmt.Errorf("%w: query: Version %q without Workflow", ErrInvalid, q.Version)
	}
	for _, s := range q.Statuses {
		if !s.Valid() {
			return fmt.Errorf("%w: query: invalid status %v", ErrInvalid, s)
		}
	}
	if q.Residency != 0 && !q.Residency.Valid() {
		return fmt.Errorf("%w: query: invalid residency %v", ErrInvalid, q.Residency)
	}
	if q.IdleFor < 0 {
		return fmt.Errorf("%w: query: negative IdleFor %v", ErrInvalid, q.IdleFor)
	}
	if q.PageSize < 0 {
		return fmt.Errorf("%w: query: negative PageSize %d", ErrInvalid, q.PageSize)
	}
	return nil
}

// Limit returns the effective page size.
func (q *Query) Limit() int { return pageLimit(q.PageSize) }

func pageLimit(size int) int {
	switch {
	case size == 0:
		return DefaultPageSize
	case size > MaxPageSize:
		return MaxPageSize
	default:
		return size
	}
}

// IdleCutoff reports whether q filters on idleness and, if so, the latest
// IdleSince a handler may have to match (zero time: any idle handler).
func (q *Query) IdleCutoff() (cutoff time.Time, idle bool) {
	if q.IdleFor <= 0 {
		return time.Time{}, q.IdleOnly
	}
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	return now.Add(-q.IdleFor), true
}
