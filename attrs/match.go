package attrs

import (
	"slices"
	"time"

	"github.com/wfd-dev/wfd/internal/status"
)

// Builtins are the built-in fields of a handler, as a query sees them. A
// zero field (no workflow, status 0, a zero time) has no value.
type Builtins struct {
	Workflow  string
	Status    status.Status
	CreatedAt time.Time // compared to the microsecond, like time attributes
	UpdatedAt time.Time
}

// lookup returns the value of the field name of a handler with built-in
// fields b and attributes s, if it has one.
func lookup(name string, b *Builtins, s Set) (Value, bool) {
	switch name {
	case FieldWorkflow:
		return StringValue(b.Workflow), b.Workflow != ""
	case FieldStatus:
		return StringValue(b.Status.String()), b.Status.Valid()
	case FieldCreatedAt:
		return TimeValue(b.CreatedAt), !b.CreatedAt.IsZero()
	case FieldUpdatedAt:
		return TimeValue(b.UpdatedAt), !b.UpdatedAt.IsZero()
	}
	v, ok := s[name]
	return v, ok && !v.IsNull()
}

// Match reports whether a handler with built-in fields b and attributes s
// satisfies q's condition; a query without one matches every handler.
// This is the query's meaning: a store that answers a query otherwise (in
// SQL, with an index) returns exactly the handlers Match accepts.
//
// The logic is two-valued: a condition on a field the handler does not
// have is false (=, !=, <, in, contains, exists alike), and not of it is
// true. So customer != "acme" leaves out handlers without a customer, and
// not customer = "acme" keeps them. A value of another type than the one
// Check fixed for its field (stored before the attribute's type changed)
// counts as missing.
func (q *Query) Match(b Builtins, s Set) bool {
	if q.Where == nil {
		return true
	}
	h := handlerView{types: q.types, b: &b, s: s}
	return h.match(q.Where)
}

// handlerView is a handler as one evaluation of a query sees it.
type handlerView struct {
	types map[string]Type // the query's fixed types; nil for an unchecked query
	b     *Builtins
	s     Set
}

// value returns the handler's value of a field, if it has one of the
// field's type.
func (h handlerView) value(name string) (Value, bool) {
	v, ok := lookup(name, h.b, h.s)
	if t, fixed := h.types[name]; fixed && v.typ != t {
		return Value{}, false
	}
	return v, ok
}

func (h handlerView) match(e Expr) bool {
	switch e := e.(type) {
	case *And:
		for _, t := range e.Terms {
			if !h.match(t) {
				return false
			}
		}
		return true
	case *Or:
		for _, t := range e.Terms {
			if h.match(t) {
				return true
			}
		}
		return false
	case *Not:
		return !h.match(e.X)
	case *Compare:
		v, ok := h.value(e.Field.Name)
		if !ok || v.typ == KeywordList {
			return false
		}
		lit, err := e.Value.As(v.typ)
		return err == nil && e.Op.holds(v.Compare(lit))
	case *In:
		return h.matchIn(e)
	case *Contains:
		v, ok := h.value(e.Field.Name)
		return ok && v.typ == KeywordList && e.Value.Kind == LitString && slices.Contains(v.list, e.Value.Str)
	case *Exists:
		_, ok := h.value(e.Field.Name)
		return ok
	}
	return false
}

func (h handlerView) matchIn(e *In) bool {
	v, ok := h.value(e.Field.Name)
	if !ok || v.typ == KeywordList {
		return false
	}
	for _, l := range e.Values {
		if lit, err := l.As(v.typ); err == nil && v.Equal(lit) {
			return true
		}
	}
	return false
}

// Compare orders two handlers (built-in fields and attributes) as o sorts
// them: by o's field, ascending or descending, with handlers that lack it
// last in either direction (PostgreSQL: NULLS LAST). A value of another
// type than the one Check fixed counts as missing; in an order Check has
// not seen, values of different types order by type (Value.Compare). 0
// means o does not tell the handlers apart: the store breaks the tie with
// its own order. A nil Order tells nothing apart.
func (o *Order) Compare(ab Builtins, as Set, bb Builtins, bs Set) int {
	if o == nil {
		return 0
	}
	av, aok := o.value(&ab, as)
	bv, bok := o.value(&bb, bs)
	switch {
	case !aok && !bok:
		return 0
	case !aok:
		return 1
	case !bok:
		return -1
	case o.Desc:
		return bv.Compare(av)
	default:
		return av.Compare(bv)
	}
}

// value returns a handler's value of o's field, if it has one of the type
// Check fixed.
func (o *Order) value(b *Builtins, s Set) (Value, bool) {
	v, ok := lookup(o.Field.Name, b, s)
	if o.typ != 0 && v.typ != o.typ {
		return Value{}, false
	}
	return v, ok
}
