package postgres

import (
	"maps"
	"slices"
	"time"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/persistence"
)

// attrRows is the rows of wfd_handler_attrs a Write replaces: every row
// of the handlers in clear goes, then the rows gathered are inserted.
// A value is one row in the column of its kind (attrColumn); a
// keyword_list, one row per distinct item.
type attrRows struct {
	clear          []string
	ids, workflows []string
	names          []string
	typs           []int16
	strs           []*string
	nums           []*float64
	tss            []*time.Time
	created        []time.Time
	createdNs      []int16
}

func (r *attrRows) args() []any {
	return []any{r.ids, r.workflows, r.names, r.typs, r.strs, r.nums, r.tss, r.created, r.createdNs}
}

// add adds the rows of h's attributes.
func (r *attrRows) add(h *persistence.Handler) {
	for _, name := range slices.Sorted(maps.Keys(h.Attributes)) {
		v := h.Attributes[name]
		if v.IsNull() {
			continue
		}
		if v.Type() == attrs.KeywordList {
			items := v.AsList()
			slices.Sort(items)
			for _, item := range slices.Compact(items) {
				r.row(h, name, v.Type(), &item, nil, nil)
			}
			continue
		}
		str, num, ts := attrColumns(v)
		r.row(h, name, v.Type(), str, num, ts)
	}
}

func (r *attrRows) row(h *persistence.Handler, name string, typ attrs.Type, str *string, num *float64, ts *time.Time) {
	r.ids = append(r.ids, h.ID)
	r.workflows = append(r.workflows, h.Workflow)
	r.names = append(r.names, name)
	r.typs = append(r.typs, int16(typ))
	r.strs, r.nums, r.tss = append(r.strs, str), append(r.nums, num), append(r.tss, ts)
	r.created = append(r.created, h.CreatedAt)
	r.createdNs = append(r.createdNs, nsOf(h.CreatedAt))
}

// attrColumns returns the column value of a value other than a
// keyword_list: one of str, num, ts is set.
func attrColumns(v attrs.Value) (str *string, num *float64, ts *time.Time) {
	switch v.Type() {
	case attrs.String, attrs.KeywordList:
		s := v.AsString()
		return &s, nil, nil
	case attrs.Time:
		t := v.AsTime()
		return nil, nil, &t
	default:
		n := attrNum(v)
		return nil, &n, nil
	}
}

// attrNum is the num column of an int, double or bool: ints are within
// ±2^53, which a double holds exactly.
func attrNum(v attrs.Value) float64 {
	switch v.Type() {
	case attrs.Int:
		return float64(v.AsInt())
	case attrs.Bool:
		if v.AsBool() {
			return 1
		}
		return 0
	default:
		return v.AsDouble()
	}
}

// attrColumn is the column of wfd_handler_attrs that holds values of
// type t (and a keyword_list's items).
func attrColumn(t attrs.Type) string {
	switch t {
	case attrs.String, attrs.KeywordList:
		return "str"
	case attrs.Time:
		return "ts"
	default:
		return "num"
	}
}

// sameIndexedAttrs reports whether next's rows of wfd_handler_attrs are
// old's: the same attributes, workflow and creation time. Most changes
// of a handler leave its attributes alone, and then its rows stay.
func sameIndexedAttrs(old, next *persistence.Handler) bool {
	return old.Workflow == next.Workflow && old.CreatedAt.Equal(next.CreatedAt) &&
		old.Attributes.Equal(next.Attributes)
}
