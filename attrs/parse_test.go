package attrs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/attrs"
)

// TestParse: valid queries and their canonical form, which parses back to
// an equal query.
func TestParse(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{``, ``},
		{" \t\n ", ``},
		{`customer = "acme"`, `customer = "acme"`},
		{`customer="acme" AND amount>100 And status=running`, `customer = "acme" and amount > 100 and status = running`},
		{`a != 1 and b < 2 and c <= 3 and d > 4 and e >= 5`, `a != 1 and b < 2 and c <= 3 and d > 4 and e >= 5`},
		{`a=1 or b=2 and c=3`, `a = 1 or b = 2 and c = 3`},
		{`(a = 1 or b = 2) and c = 3`, `(a = 1 or b = 2) and c = 3`},
		{`a = 1 and (b = 2 and c = 3)`, `a = 1 and b = 2 and c = 3`},
		{`(a = 1 or (b = 2 or c = 3))`, `a = 1 or b = 2 or c = 3`},
		{`(a = 1 and b = 2) or c = 3`, `a = 1 and b = 2 or c = 3`},
		{`((a = 1))`, `a = 1`},
		{`not (a = 1 and b = 2)`, `not (a = 1 and b = 2)`},
		{`not (a = 1 or b = 2)`, `not (a = 1 or b = 2)`},
		{`NOT not a = 1`, `not not a = 1`},
		{`not (not a = 1)`, `not not a = 1`},
		{`not a = 1 and b = 2`, `not a = 1 and b = 2`},
		{`tags contains "x"`, `tags contains "x"`},
		{`tags not contains "x"`, `not tags contains "x"`},
		{`region in ("eu","uk")`, `region in ("eu", "uk")`},
		{`status not in (completed, FAILED)`, `not status in (completed, failed)`},
		{`status In (Running)`, `status in (running)`},
		{`status = "running"`, `status = "running"`},
		{`note exists`, `note exists`},
		{`note not exists and x = 1`, `not note exists and x = 1`},
		{`amount >= -5`, `amount >= -5`},
		{`x = 007`, `x = 7`},
		{`x = -0`, `x = 0`},
		{`x = 1.50`, `x = 1.5`},
		{`x = 1.0`, `x = 1.0`},
		{`x = 1e3`, `x = 1000.0`},
		{`x = -0.0`, `x = 0.0`},
		{`x = 2.5E-3`, `x = 0.0025`},
		{`x = 1e21`, `x = 1e+21`},
		{`x = 1.5e-7`, `x = 1.5e-07`},
		{`x = 9007199254740991`, `x = 9007199254740991`},
		{`x = -9007199254740991`, `x = -9007199254740991`},
		{`vip = TRUE or vip = False`, `vip = true or vip = false`},
		{`s = "a\"b\\c\n\t\r\b\f\u00e9\/"`, `s = "a\"b\\c\n\t\r\u0008\u000cé/"`},
		{`s = "\ud83d\ude00 \u007f"`, `s = "😀 \u007f"`},
		{`s = "é ü 日本"`, `s = "é ü 日本"`},
		{`s = ""`, `s = ""`},
		{`order by amount`, `order by amount`},
		{`ORDER BY amount ASC`, `order by amount`},
		{`order by amount desc`, `order by amount desc`},
		{`a = 1 order by b DESC`, `a = 1 order by b desc`},
		{`created_at > "2025-01-31T09:00:00Z"`, `created_at > "2025-01-31T09:00:00Z"`},
		{`Customer = "x"`, `Customer = "x"`},
		{`_x = 1`, `_x = 1`},
		{"a\n=\n1\r\nand\tb=2", `a = 1 and b = 2`},
	} {
		q, err := attrs.Parse(tc.q)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.q, err)
			continue
		}
		if got := q.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.q, got, tc.want)
		}
		again, err := attrs.Parse(q.String())
		if err != nil {
			t.Errorf("Parse(%q) (the String of %q): %v", q.String(), tc.q, err)
			continue
		}
		if !equalQuery(q, again) {
			t.Errorf("Parse(%q) = %s, not equal to Parse(%q)", q.String(), again, tc.q)
		}
	}
}

// TestParseTree: precedence and the nodes Parse builds.
func TestParseTree(t *testing.T) {
	q, err := attrs.Parse(`not a = 1 and b in (2, 3) or c contains "x" and not d exists order by e desc`)
	if err != nil {
		t.Fatal(err)
	}
	or, ok := q.Where.(*attrs.Or)
	if !ok || len(or.Terms) != 2 {
		t.Fatalf("Where = %#v, want an Or of two", q.Where)
	}
	left, ok := or.Terms[0].(*attrs.And)
	if !ok || len(left.Terms) != 2 {
		t.Fatalf("left = %#v, want an And of two", or.Terms[0])
	}
	not, ok := left.Terms[0].(*attrs.Not)
	if !ok || not.At != 1 {
		t.Fatalf("left.Terms[0] = %#v, want a Not at 1", left.Terms[0])
	}
	cmp, ok := not.X.(*attrs.Compare)
	if !ok || cmp.Field != (attrs.Field{Name: "a", At: 5}) || cmp.Op != attrs.Eq || cmp.OpAt != 7 ||
		cmp.Value != (attrs.Literal{At: 9, Kind: attrs.LitInt, Int: 1}) {
		t.Fatalf("not.X = %#v", not.X)
	}
	in, ok := left.Terms[1].(*attrs.In)
	if !ok || in.Field.Name != "b" || len(in.Values) != 2 || in.Values[1] != (attrs.Literal{At: 24, Kind: attrs.LitInt, Int: 3}) {
		t.Fatalf("left.Terms[1] = %#v", left.Terms[1])
	}
	right := or.Terms[1].(*attrs.And)
	if c, ok := right.Terms[0].(*attrs.Contains); !ok || c.Value.Str != "x" || c.Pos() != 30 {
		t.Fatalf("right.Terms[0] = %#v", right.Terms[0])
	}
	if n, ok := right.Terms[1].(*attrs.Not); !ok || n.Pos() != 49 {
		t.Fatalf("right.Terms[1] = %#v", right.Terms[1])
	} else if e, ok := n.X.(*attrs.Exists); !ok || e.Field != (attrs.Field{Name: "d", At: 53}) {
		t.Fatalf("right.Terms[1].X = %#v", n.X)
	}
	if q.Order == nil || *q.Order != (attrs.Order{Field: attrs.Field{Name: "e", At: 71}, Desc: true}) {
		t.Fatalf("Order = %#v", q.Order)
	}
	if q.Where.Pos() != 1 {
		t.Fatalf("Where.Pos() = %d", q.Where.Pos())
	}
}

// TestParseErrors: malformed queries are *SyntaxErrors wrapping
// ErrInvalid, at the position of the offending token.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		q   string
		pos int
		msg string
	}{
		{`amount >`, 9, `expected a value after ">"`},
		{`status = running and amount >`, 30, `expected a value after ">"`},
		{`customer = acme`, 12, `expected a value after "=", got acme (strings are in double quotes: "acme")`},
		{`a = 1 b = 2`, 7, `expected "and", "or", "order by" or the end of the query after 1, got b`},
		{`a = 1)`, 6, `expected "and", "or", "order by" or the end of the query after 1, got ")"`},
		{`(a = 1`, 7, `expected "and", "or" or ")" after 1 (to close the "(" at position 1)`},
		{`(a = 1 b`, 8, `expected "and", "or" or ")" after 1 (to close the "(" at position 1), got b`},
		{`a = 1 and`, 10, `expected a condition (an attribute's name, "not" or "(") after "and"`},
		{`and a = 1`, 1, `expected a condition (an attribute's name, "not" or "("), got "and"`},
		{`a = 1 or or b = 1`, 10, `expected a condition (an attribute's name, "not" or "(") after "or", got "or"`},
		{`()`, 2, `expected a condition (an attribute's name, "not" or "(") after "(", got ")"`},
		{`not`, 4, `expected a condition (an attribute's name, "not" or "(") after "not"`},
		{`in = 1`, 1, `expected a condition (an attribute's name, "not" or "("), got "in"`},
		{`"a" = 1`, 1, `expected a condition (an attribute's name, "not" or "("), got "a"`},
		{`a`, 2, `expected an operator (=, !=, <, <=, >, >=, in, contains, exists) after a`},
		{`a foo 1`, 3, `expected an operator (=, !=, <, <=, >, >=, in, contains, exists) after a, got foo`},
		{`a not = 1`, 7, `expected "in", "contains" or "exists" after "not", got "="`},
		{`a == 1`, 3, `use = to compare (not ==)`},
		{`a <> 1`, 3, `use != (not <>)`},
		{`a ! 1`, 3, `unexpected "!" (use != or not)`},
		{`a = 'x'`, 5, `strings are in double quotes: "text"`},
		{`a = "x`, 5, `unterminated string`},
		{`a = "x\`, 7, `unterminated string`},
		{`a = "x\q"`, 7, `unknown escape "\q"`},
		{`a = "\é"`, 6, `unknown escape "\é"`},
		{`a = "\u12"`, 6, `bad \u escape: want \uXXXX (four hex digits; a surrogate pair for U+10000 and above)`},
		{`a = "\u12g4"`, 6, `bad \u escape: want \uXXXX (four hex digits; a surrogate pair for U+10000 and above)`},
		{`a = "\ud800"`, 6, `bad \u escape: want \uXXXX (four hex digits; a surrogate pair for U+10000 and above)`},
		{`a = "\ud800\u0041"`, 6, `bad \u escape: want \uXXXX (four hex digits; a surrogate pair for U+10000 and above)`},
		{`a = "\udc00"`, 6, `bad \u escape: want \uXXXX (four hex digits; a surrogate pair for U+10000 and above)`},
		{`a = "\u0000"`, 6, `a string cannot contain NUL (\u0000)`},
		{"a = \"x\ty\"", 7, `control character in a string (write \n, \t or \u00XX)`},
		{`a = 1.`, 7, `expected a digit after "."`},
		{`a = .5`, 5, `unexpected character '.'`},
		{`a = 1e`, 7, `expected a digit in the exponent`},
		{`a = 1e+`, 8, `expected a digit in the exponent`},
		{`a = 12abc`, 7, `malformed number "12a"`},
		{`a = 1.2.3`, 8, `malformed number "1.2."`},
		{`a = - 1`, 5, `unexpected character '-'`},
		{`a = 9007199254740992`, 5, `integer 9007199254740992 out of range ±9007199254740991`},
		{`a = -99999999999999999999`, 5, `integer -99999999999999999999 out of range ±9007199254740991`},
		{`a = 1e999`, 5, `number 1e999 out of range`},
		{`a = #`, 5, `unexpected character '#'`},
		{`a = é`, 5, `unexpected character 'é'`},
		{"a = \"\xff\"", 6, `invalid UTF-8`},
		{`a in 1`, 6, `expected "(" and a list of values after "in", got 1`},
		{`a in ()`, 7, `expected a value after "(", got ")"`},
		{`a in (1, )`, 10, `expected a value after ",", got ")"`},
		{`a in (1 2)`, 9, `expected "," or ")" after 1 (to close the "(" at position 6), got 2`},
		{`a in (1`, 8, `expected "," or ")" after 1 (to close the "(" at position 6)`},
		{`a contains`, 11, `expected a value after "contains"`},
		{`status = and`, 10, `expected a value after "=", got "and"`},
		{`status in (running, and)`, 21, `expected a value after ",", got "and"`},
		{`x = true false`, 10, `expected "and", "or", "order by" or the end of the query after "true", got "false"`},
		{`order amount`, 7, `expected "by" after "order", got amount`},
		{`order by`, 9, `expected a field to order by after "by"`},
		{`order by desc`, 10, `expected a field to order by after "by", got "desc"`},
		{`order by a desc b`, 17, `expected the end of the query after "desc", got b`},
		{`order by a, b`, 11, `expected the end of the query after a, got ","`},
		{`a = 1 order by b and c = 1`, 18, `expected the end of the query after b, got "and"`},
		{`order by a a = 1`, 12, `expected the end of the query after a, got a`},
	} {
		_, err := attrs.Parse(tc.q)
		var se *attrs.SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, attrs.ErrInvalid) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError wrapping ErrInvalid", tc.q, err)
			continue
		}
		if se.Pos != tc.pos || se.Msg != tc.msg {
			t.Errorf("Parse(%q) = position %d: %s\n                        want position %d: %s", tc.q, se.Pos, se.Msg, tc.pos, tc.msg)
		}
	}
}

// TestParseLimits: a query's length, nesting and conditions are bounded,
// and the bounds themselves are allowed.
func TestParseLimits(t *testing.T) {
	conds := func(n int) string {
		terms := make([]string, n)
		for i := range terms {
			terms[i] = "a = 1"
		}
		return strings.Join(terms, " and ")
	}
	values := func(n int) string { return "a in (" + strings.Repeat("1, ", n-1) + "1)" }
	long := `a = "` + strings.Repeat("x", attrs.MaxQueryBytes-6) + `"`
	for _, tc := range []struct {
		q   string
		pos int // 0: parses
		msg string
	}{
		{long, 0, ""},
		{long + " ", attrs.MaxQueryBytes + 1, "a query is at most 2048 bytes, not 2049"},
		{strings.Repeat("(", attrs.MaxDepth) + "a = 1" + strings.Repeat(")", attrs.MaxDepth), 0, ""},
		{strings.Repeat("(", attrs.MaxDepth+1) + "a = 1" + strings.Repeat(")", attrs.MaxDepth+1), attrs.MaxDepth + 1, "nested more than 32 deep (parentheses and not)"},
		{strings.Repeat("not ", attrs.MaxDepth) + "a = 1", 0, ""},
		{strings.Repeat("not ", attrs.MaxDepth+1) + "a = 1", 4*attrs.MaxDepth + 1, "nested more than 32 deep (parentheses and not)"},
		{strings.Repeat("(not ", 16) + "a = 1" + strings.Repeat(")", 16), 0, ""},
		{strings.Repeat("(not ", 17) + "a = 1" + strings.Repeat(")", 17), 5*16 + 1, "nested more than 32 deep (parentheses and not)"},
		{strings.Repeat("(", 1000), attrs.MaxDepth + 1, "nested more than 32 deep (parentheses and not)"},
		{conds(attrs.MaxTerms), 0, ""},
		{conds(attrs.MaxTerms + 1), 64*10 + 1, "more than 64 conditions"},
		{values(attrs.MaxTerms), 0, ""},
		{values(attrs.MaxTerms + 1), 7 + 3*64, "more than 64 values in a list"},
	} {
		_, err := attrs.Parse(tc.q)
		if tc.pos == 0 {
			if err != nil {
				t.Errorf("Parse(%.40q…): %v", tc.q, err)
			}
			continue
		}
		var se *attrs.SyntaxError
		if !errors.As(err, &se) || se.Pos != tc.pos || se.Msg != tc.msg {
			t.Errorf("Parse(%.40q…) = %v, want position %d: %s", tc.q, err, tc.pos, tc.msg)
		}
	}
}

// equalQuery reports whether a and b are the same query, positions aside.
func equalQuery(a, b *attrs.Query) bool {
	if (a.Where == nil) != (b.Where == nil) || (a.Order == nil) != (b.Order == nil) {
		return false
	}
	if a.Order != nil && (a.Order.Field.Name != b.Order.Field.Name || a.Order.Desc != b.Order.Desc) {
		return false
	}
	return a.Where == nil || equalExpr(a.Where, b.Where)
}

func equalExpr(a, b attrs.Expr) bool {
	switch a := a.(type) {
	case *attrs.And:
		b, ok := b.(*attrs.And)
		return ok && equalExprs(a.Terms, b.Terms)
	case *attrs.Or:
		b, ok := b.(*attrs.Or)
		return ok && equalExprs(a.Terms, b.Terms)
	case *attrs.Not:
		b, ok := b.(*attrs.Not)
		return ok && equalExpr(a.X, b.X)
	case *attrs.Compare:
		b, ok := b.(*attrs.Compare)
		return ok && a.Field.Name == b.Field.Name && a.Op == b.Op && equalLiteral(a.Value, b.Value)
	case *attrs.In:
		b, ok := b.(*attrs.In)
		if !ok || a.Field.Name != b.Field.Name || len(a.Values) != len(b.Values) {
			return false
		}
		for i := range a.Values {
			if !equalLiteral(a.Values[i], b.Values[i]) {
				return false
			}
		}
		return true
	case *attrs.Contains:
		b, ok := b.(*attrs.Contains)
		return ok && a.Field.Name == b.Field.Name && equalLiteral(a.Value, b.Value)
	case *attrs.Exists:
		b, ok := b.(*attrs.Exists)
		return ok && a.Field.Name == b.Field.Name
	}
	return false
}

func equalExprs(a, b []attrs.Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalExpr(a[i], b[i]) {
			return false
		}
	}
	return true
}

func equalLiteral(a, b attrs.Literal) bool {
	a.At, b.At = 0, 0
	return a == b
}
