package backend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/persistence"
)

// DriveTerm returns the term of q.Where's condition that a backend
// selects ListHandlers' candidates by (an index lookup), the rest of the
// condition filtering them (Match). The order of preference is the
// likely selectivity: an attribute's = or contains (fewest values first),
// workflow or status = or in, an attribute's range, a created_at range.
// updated_at is not indexed. ok is false when q has no condition (an
// ordered listing of every handler of q.Workflow); a condition no term of
// which is usable fails with persistence.ErrUnindexed, saying why.
func DriveTerm(q *persistence.Query) (term attrs.IndexTerm, ok bool, err error) {
	if q.Where == nil || q.Where.Where == nil {
		return attrs.IndexTerm{}, false, nil
	}
	plan := q.Where.Plan()
	best, bestRank := -1, 0
	for i, t := range plan.Terms {
		r := termRank(t)
		if r > 0 && (best < 0 || r < bestRank) {
			best, bestRank = i, r
		}
	}
	if best < 0 {
		reason := plan.Reason
		if reason == "" {
			reason = "its only conditions at the top level are on updated_at, which no index holds"
		}
		return attrs.IndexTerm{}, false, &persistence.UnindexedError{Reason: reason}
	}
	return plan.Terms[best], true, nil
}

// termRank ranks an index term: lower is preferred, 0 is unusable.
func termRank(t attrs.IndexTerm) int {
	switch {
	case t.Builtin && t.Field == attrs.FieldUpdatedAt:
		return 0
	case t.Builtin && t.Kind == attrs.TermRange && t.Field != attrs.FieldCreatedAt:
		return 0
	case !t.Builtin && t.Kind != attrs.TermRange:
		return 1 + len(t.Values)
	case t.Builtin && t.Kind != attrs.TermRange:
		return 100 + len(t.Values)
	case !t.Builtin:
		return 1000
	default:
		return 2000
	}
}

// Builtins returns h's built-in fields as a query sees them.
func Builtins(h *persistence.Handler) attrs.Builtins {
	return attrs.Builtins{Workflow: h.Workflow, Status: h.Status, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt}
}

// Match reports whether h passes q.Where's condition (true without one).
func Match(q *persistence.Query, h *persistence.Handler) bool {
	return q.Where == nil || q.Where.Match(Builtins(h), h.Attributes)
}

// SortOrdered sorts hs by q.Where's order, ties newest first (CreatedAt,
// then ID, descending), as a listing without order lists them.
func SortOrdered(q *persistence.Query, hs []persistence.Handler) {
	o := q.Where.Order
	slices.SortStableFunc(hs, func(a, b persistence.Handler) int {
		if c := o.Compare(Builtins(&a), a.Attributes, Builtins(&b), b.Attributes); c != 0 {
			return c
		}
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
}

// OrderedPage returns the page of the sorted hs after the handler last
// (the last one of the previous page; "" for the first page), at most
// limit of them, and the id to continue after ("" on the last page). A
// last that is no longer among hs (deleted, or no longer matching) fails
// with persistence.ErrInvalid: the client lists again from the start.
func OrderedPage(hs []persistence.Handler, last string, limit int) ([]persistence.Handler, string, error) {
	start := 0
	if last != "" {
		i := slices.IndexFunc(hs, func(h persistence.Handler) bool { return h.ID == last })
		if i < 0 {
			return nil, "", fmt.Errorf("%w: the page token's handler no longer matches the query: list again from the first page", persistence.ErrInvalid)
		}
		start = i + 1
	}
	hs = hs[start:]
	if len(hs) <= limit {
		return hs, "", nil
	}
	return hs[:limit], hs[limit-1].ID, nil
}

// TooManyOrdered is the error of an ordered listing that matches more
// than persistence.MaxOrderedMatches handlers.
func TooManyOrdered() error {
	return &persistence.UnindexedError{Reason: fmt.Sprintf("it matches more than %d handlers, too many to order: narrow its condition",
		persistence.MaxOrderedMatches)}
}
