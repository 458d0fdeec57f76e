package attrs_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/wfd-dev/wfd/attrs"
)

// FuzzParse: Parse never panics and refuses with a *SyntaxError inside
// the query only; a query it takes prints (String) as one that parses to
// an equal query with the same String and the same meaning; Check,
// Match, Plan and Order do not panic; and each term of a checked query's
// plan holds for every handler the query matches (an index that answers
// a term misses none of the results).
func FuzzParse(f *testing.F) {
	for _, q := range []string{
		``, `customer = "acme" and amount > 100 and status = running`,
		`tags contains "urgent" and not (region in ("eu", "uk") or vip = true)`,
		`due < "2025-07-01T00:00:00Z" and customer exists order by due`, `workflow = "expense" order by amount desc`,
		`status not in (completed, FAILED) and price >= -1.5e3`, `not not (a = 1 or b != 2) and c <= 3`,
		`s = "a\"b\\c\n\u00e9\ud83d\ude00"`, `created_at > "2025-01-31T09:00:00.123456+01:00" or updated_at < "2025-01-01T00:00:00Z"`,
		`amount in (80, 100) and price = 9.5 and vip != false`, `((((amount = 1))))`, `tags not exists`, `order by created_at`,
		`amount >`, `customer = acme`, `a == 1`, `a = "\u12"`, `(a = 1`, `a in ()`, `a = 1.`, "a = \"\xff\"",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, src string) {
		q, err := attrs.Parse(src)
		if err != nil {
			var se *attrs.SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, attrs.ErrInvalid) || se.Pos < 1 || se.Pos > min(len(src), attrs.MaxQueryBytes)+1 {
				t.Fatalf("Parse(%q) = %v: not a *SyntaxError inside the query", src, err)
			}
			return
		}
		checkErr := q.Check(testSchema)
		if checkErr != nil {
			var te *attrs.TypeError
			if !errors.As(checkErr, &te) || te.Pos < 1 || te.Pos > len(src) {
				t.Fatalf("Check(%q) = %v: not a *TypeError inside the query", src, checkErr)
			}
		}
		s := q.String()
		if len(s) <= attrs.MaxQueryBytes { // escapes and spaces can make the canonical form longer
			again, err := attrs.Parse(s)
			if err != nil {
				t.Fatalf("Parse(%q) (the String of %q): %v", s, src, err)
			}
			if !equalQuery(q, again) || again.String() != s {
				t.Fatalf("Parse(%q) = %s, not the query of %q", s, again, src)
			}
			if err := again.Check(testSchema); (err == nil) != (checkErr == nil) {
				t.Fatalf("Check(%q) = %v, but Check(%q) = %v", s, err, src, checkErr)
			}
			for _, h := range testHandlers {
				if q.Match(h.b, h.s) != again.Match(h.b, h.s) {
					t.Fatalf("%q and %q differ on %s", src, s, h.name)
				}
			}
		}
		plan := q.Plan()
		if (len(plan.Terms) == 0) == (plan.Reason == "") {
			t.Fatalf("Plan(%q) = %+v: terms and a reason, or neither", src, plan)
		}
		for _, h := range testHandlers {
			if !q.Match(h.b, h.s) {
				continue
			}
			for _, term := range plan.Terms {
				if !termHolds(term, h) {
					t.Fatalf("%q matches %s, but its plan's term %s does not", src, h.name, describeTerm(term))
				}
			}
		}
		if q.Order != nil {
			for _, a := range testHandlers {
				for _, b := range testHandlers {
					if q.Order.Compare(a.b, a.s, b.b, b.s) != -q.Order.Compare(b.b, b.s, a.b, a.s) {
						t.Fatalf("%q: Order.Compare is not antisymmetric on %s, %s", src, a.name, b.name)
					}
				}
			}
		}
	})
}

// fieldOf is a handler's value of a field, found independently of the
// package.
func fieldOf(name string, h handler) (attrs.Value, bool) {
	switch name {
	case attrs.FieldWorkflow:
		return attrs.StringValue(h.b.Workflow), h.b.Workflow != ""
	case attrs.FieldStatus:
		return attrs.StringValue(h.b.Status.String()), h.b.Status.Valid()
	case attrs.FieldCreatedAt:
		return attrs.TimeValue(h.b.CreatedAt), !h.b.CreatedAt.IsZero()
	case attrs.FieldUpdatedAt:
		return attrs.TimeValue(h.b.UpdatedAt), !h.b.UpdatedAt.IsZero()
	}
	v, ok := h.s[name]
	return v, ok && !v.IsNull()
}

// termHolds reports whether h has a value of term's field that term
// selects, as an index lookup would find it.
func termHolds(term attrs.IndexTerm, h handler) bool {
	v, ok := fieldOf(term.Field, h)
	if !ok || v.Type() != term.Type {
		return false
	}
	switch term.Kind {
	case attrs.TermEqual:
		return slices.ContainsFunc(term.Values, v.Equal)
	case attrs.TermContains:
		return slices.Contains(v.AsList(), term.Values[0].AsString())
	case attrs.TermRange:
		if l := term.Lower; l != nil {
			if c := v.Compare(l.Value); c < 0 || c == 0 && !l.Inclusive {
				return false
			}
		}
		if u := term.Upper; u != nil {
			if c := v.Compare(u.Value); c > 0 || c == 0 && !u.Inclusive {
				return false
			}
		}
		return true
	}
	return false
}
