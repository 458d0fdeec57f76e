package attrs

// Plan is what an index could do for a query: the conditions at the top
// level of its condition (the whole condition, or the terms of a
// top-level and) that an index on one field answers. Every handler the
// query matches satisfies each of them, so a store may fetch the handlers
// one term selects through an index and then filter them with Match (or
// let SQL evaluate the rest). Which term to use, and whether an index
// exists for it, is the store's decision: a store that finds none usable
// refuses the query with Reason, or with its own, instead of scanning
// every handler silently.
type Plan struct {
	// Terms are the usable conditions, in the order of the query; ranges
	// on one field are merged into one term.
	Terms []IndexTerm
	// Reason says why no term is usable ("" when Terms is not empty).
	Reason string
}

// TermKind is what an IndexTerm asks of its field.
type TermKind int

// The kinds of index terms.
const (
	// TermEqual: the field equals one of Values (= has one; in, several).
	TermEqual TermKind = iota + 1
	// TermContains: the keyword_list field has Values[0] among its items.
	TermContains
	// TermRange: the field lies between Lower and Upper.
	TermRange
)

// IndexTerm is a condition an index on one field answers.
type IndexTerm struct {
	Field   string
	Builtin bool // workflow, status, created_at or updated_at
	Type    Type // the field's type (String for status, whose values are the statuses' names)
	Kind    TermKind
	// Values are the candidates of a TermEqual (in the query's order) and
	// the item of a TermContains; typed as Type.
	Values []Value
	// Lower and Upper bound a TermRange; nil is unbounded. An empty range
	// (lower above upper) can match nothing.
	Lower, Upper *Bound
}

// Bound is one end of a range.
type Bound struct {
	Value     Value
	Inclusive bool
}

// Plan analyses q for a store: the terms at the top level that an index
// could answer, typed as Check fixed them (Check q first: an unchecked
// query has no terms). Usable are =, in, contains and the range operators
// (<, <=, >, >=) on a declared attribute or built-in field; not usable are
// !=, exists, not, and an or, which no single index answers: for
//
//	customer = "acme" and amount > 100
//
// both terms are usable, for customer = "acme" or amount > 100 neither,
// and a query made only of those gets a Reason.
func (q *Query) Plan() Plan {
	switch {
	case q.Where == nil:
		return Plan{Reason: "the query has no condition: it matches every handler"}
	case q.types == nil:
		return Plan{Reason: "the query is not checked against the workflow's attributes (Query.Check)"}
	}
	conj := []Expr{q.Where}
	if and, ok := q.Where.(*And); ok {
		conj = and.Terms
	}
	var p Plan
	ranges := map[string]int{} // field → index of its TermRange in p.Terms
	for _, e := range conj {
		t, ok := indexTerm(e, q.types)
		if !ok {
			continue
		}
		if t.Kind != TermRange {
			p.Terms = append(p.Terms, t)
			continue
		}
		if i, seen := ranges[t.Field]; seen {
			p.Terms[i].Lower = tighter(p.Terms[i].Lower, t.Lower, 1)
			p.Terms[i].Upper = tighter(p.Terms[i].Upper, t.Upper, -1)
			continue
		}
		ranges[t.Field] = len(p.Terms)
		p.Terms = append(p.Terms, t)
	}
	if len(p.Terms) == 0 {
		p.Reason = noIndexReason(q.Where)
	}
	return p
}

// indexTerm returns the index term e is, if it is one, with the fields'
// types fixed by Check.
func indexTerm(e Expr, types map[string]Type) (IndexTerm, bool) {
	var fd Field
	switch e := e.(type) {
	case *Compare:
		fd = e.Field
	case *In:
		fd = e.Field
	case *Contains:
		fd = e.Field
	default:
		return IndexTerm{}, false
	}
	typ, ok := types[fd.Name]
	if !ok {
		return IndexTerm{}, false
	}
	_, builtin := lookupField(nil, fd.Name)
	f := field{typ: typ, builtin: builtin}
	t := IndexTerm{Field: fd.Name, Builtin: f.builtin, Type: f.typ, Kind: TermEqual}
	switch e := e.(type) {
	case *Compare:
		v, err := e.Value.As(f.typ)
		if err != nil || f.typ == KeywordList || e.Op == Ne {
			return IndexTerm{}, false
		}
		switch e.Op {
		case Eq:
			t.Values = []Value{v}
		case Lt, Le:
			t.Kind, t.Upper = TermRange, &Bound{Value: v, Inclusive: e.Op == Le}
		case Gt, Ge:
			t.Kind, t.Lower = TermRange, &Bound{Value: v, Inclusive: e.Op == Ge}
		}
	case *In:
		for _, l := range e.Values {
			v, err := l.As(f.typ)
			if err != nil || f.typ == KeywordList {
				return IndexTerm{}, false
			}
			t.Values = append(t.Values, v)
		}
	case *Contains:
		v, err := e.Value.As(String)
		if err != nil || f.typ != KeywordList {
			return IndexTerm{}, false
		}
		t.Kind, t.Values = TermContains, []Value{v}
	}
	return t, true
}

// tighter returns the tighter of two bounds of the same side: dir 1 for
// lower bounds (the higher is tighter), -1 for upper ones. At equal
// values, the exclusive bound is tighter.
func tighter(a, b *Bound, dir int) *Bound {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	if c := a.Value.Compare(b.Value) * dir; c > 0 || c == 0 && !a.Inclusive {
		return a
	}
	return b
}

// noIndexReason says why no term of where is usable.
func noIndexReason(where Expr) string {
	if _, ok := where.(*Or); ok {
		return `the query is an "or" at the top level: an index answers an "and" of conditions ` +
			`(such as a = 1 and b > 2), and no single index answers a = 1 or b = 2; ` +
			`add a condition that every result satisfies, with "and" around the "or"`
	}
	return "no condition at the top level is an =, in, contains or range (<, <=, >, >=) on an attribute " +
		`or built-in field: !=, exists, not and conditions inside an "or" need a scan of every handler`
}
