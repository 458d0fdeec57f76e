package attrs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/attrs"
)

// describeTerm writes an index term for comparison: field = v | v,
// field contains v, field (lo, hi] with -inf and +inf; built-in fields
// with a *.
func describeTerm(t attrs.IndexTerm) string {
	name := t.Field
	if t.Builtin {
		name = "*" + name
	}
	name += ":" + t.Type.String()
	switch t.Kind {
	case attrs.TermEqual:
		vs := make([]string, len(t.Values))
		for i, v := range t.Values {
			vs[i] = v.String()
		}
		return name + " = " + strings.Join(vs, " | ")
	case attrs.TermContains:
		return name + " contains " + t.Values[0].String()
	case attrs.TermRange:
		lo, hi := "(-inf", "+inf)"
		if t.Lower != nil {
			lo = map[bool]string{true: "[", false: "("}[t.Lower.Inclusive] + t.Lower.Value.String()
		}
		if t.Upper != nil {
			hi = t.Upper.Value.String() + map[bool]string{true: "]", false: ")"}[t.Upper.Inclusive]
		}
		return name + " " + lo + ", " + hi
	}
	return fmt.Sprintf("kind %d", t.Kind)
}

// TestPlan: the top-level conditions an index could answer, or why none.
func TestPlan(t *testing.T) {
	const (
		orReason   = `the query is an "or" at the top level: an index answers an "and" of conditions (such as a = 1 and b > 2), and no single index answers a = 1 or b = 2; add a condition that every result satisfies, with "and" around the "or"`
		noneReason = `no condition at the top level is an =, in, contains or range (<, <=, >, >=) on an attribute or built-in field: !=, exists, not and conditions inside an "or" need a scan of every handler`
		allReason  = "the query has no condition: it matches every handler"
		unchecked  = "the query is not checked against the workflow's attributes (Query.Check)"
	)
	for _, tc := range []struct {
		q      string
		terms  []string
		reason string
	}{
		{`customer = "acme" and amount > 100 and status = running`,
			[]string{`customer:string = "acme"`, `amount:int (100, +inf)`, `*status:string = "running"`}, ""},
		{`amount > 100 and amount <= 500 and amount >= 100 and amount < 600`, []string{`amount:int (100, 500]`}, ""},
		{`amount >= 100 and amount > 100`, []string{`amount:int (100, +inf)`}, ""},
		{`amount > 100 and amount >= 100`, []string{`amount:int (100, +inf)`}, ""},
		{`amount <= 5 and amount < 5`, []string{`amount:int (-inf, 5)`}, ""},
		{`amount < 5 and amount <= 5`, []string{`amount:int (-inf, 5)`}, ""},
		{`amount >= 5 and amount <= 5`, []string{`amount:int [5, 5]`}, ""},
		{`amount > 5 and amount < 3`, []string{`amount:int (5, 3)`}, ""},
		{`price > 1`, []string{`price:double (1.0, +inf)`}, ""},
		{`due < "2025-01-01T00:00:00+01:00"`, []string{`due:time (-inf, "2024-12-31T23:00:00Z")`}, ""},
		{`region in ("eu", "uk")`, []string{`region:string = "eu" | "uk"`}, ""},
		{`status in (running, "failed")`, []string{`*status:string = "running" | "failed"`}, ""},
		{`tags contains "x" and tags contains "y"`, []string{`tags:keyword_list contains "x"`, `tags:keyword_list contains "y"`}, ""},
		{`customer = "a" and customer = "b"`, []string{`customer:string = "a"`, `customer:string = "b"`}, ""},
		{`(customer = "a" or amount = 1) and vip = true`, []string{`vip:bool = true`}, ""},
		{`created_at >= "2025-01-01T00:00:00Z" and workflow = "x" and updated_at < "2025-01-02T00:00:00Z"`,
			[]string{`*created_at:time ["2025-01-01T00:00:00Z", +inf)`, `*workflow:string = "x"`, `*updated_at:time (-inf, "2025-01-02T00:00:00Z")`}, ""},
		{`customer != "a" and vip = true and not amount = 1`, []string{`vip:bool = true`}, ""},
		{`nope = 1 and amount = 1`, nil, unchecked}, // Check refuses it
		{`customer = "acme" or amount = 2`, nil, orReason},
		{`customer != "a"`, nil, noneReason},
		{`not customer = "a"`, nil, noneReason},
		{`customer exists and tags exists`, nil, noneReason},
		{`not (customer = "a" and amount = 1)`, nil, noneReason},
		{`amount = "x"`, nil, unchecked},
		{``, nil, allReason},
		{`order by amount`, nil, allReason},
	} {
		q, err := attrs.Parse(tc.q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.q, err)
		}
		_ = q.Check(testSchema) // a query Check refuses has no plan
		p := q.Plan()
		var got []string
		for _, term := range p.Terms {
			got = append(got, describeTerm(term))
		}
		if strings.Join(got, "; ") != strings.Join(tc.terms, "; ") || p.Reason != tc.reason {
			t.Errorf("Plan(%s) = %q, %q\n            want %q, %q", tc.q, got, p.Reason, tc.terms, tc.reason)
		}
	}
}
