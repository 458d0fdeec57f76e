package persistence

import (
	"fmt"
	"time"

	"github.com/wfd-dev/wfd/attrs"
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
	// Where, if not nil, keeps the handlers its condition matches
	// (attrs.Query.Match over the handler's built-in fields and
	// Attributes) and, if it has an order, sorts them by it. It must have
	// been checked (attrs.Query.Check) against the schema of Workflow's
	// attributes; a Where naming attributes needs Workflow. The store
	// answers it through an index: one term of Where.Plan() (an
	// attribute's =, in, contains or range; workflow or status = or in; a
	// created_at range) selects the candidates, and the rest of the
	// condition filters them. A condition no index answers fails with
	// ErrUnindexed, never with a scan of every handler. A Where with an
	// order but no condition orders Workflow's handlers (or all).
	//
	// An ordered listing sorts at most MaxOrderedMatches handlers; more
	// fail with ErrUnindexed, and a narrower condition is needed. Its
	// pages continue after the last handler listed as the order places it
	// when the next page is read, so a handler whose attribute changed
	// between pages may be listed twice or not at all.
	Where *attrs.Query
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
	if q.Where != nil && q.Workflow == "" && whereNamesAttributes(q.Where) {
		return fmt.Errorf("%w: query: a condition on attributes needs Workflow", ErrInvalid)
	}
	if q.PageSize < 0 {
		return fmt.Errorf("%w: query: negative PageSize %d", ErrInvalid, q.PageSize)
	}
	return nil
}

// MaxOrderedMatches is the most handlers an ordered listing (Query.Where
// with an order) sorts.
const MaxOrderedMatches = 10000

// whereNamesAttributes reports whether w's condition or order names a
// field other than the built-in ones.
func whereNamesAttributes(w *attrs.Query) bool {
	for _, name := range w.Fields() {
		if !attrs.Builtin(name) {
			return true
		}
	}
	return false
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
