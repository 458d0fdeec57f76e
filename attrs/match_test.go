package attrs_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/internal/status"
)

// handler is a handler as a query sees it.
type handler struct {
	name string
	b    attrs.Builtins
	s    attrs.Set
}

// testHandlers cover every type, missing attributes, a boundary value, an
// empty keyword list, and a value whose type differs from the schema's.
var testHandlers = []handler{
	{"h1", attrs.Builtins{Workflow: "expense", Status: status.Running, CreatedAt: day(1), UpdatedAt: day(2)}, attrs.Set{
		"customer": attrs.StringValue("acme"), "region": attrs.StringValue("eu"), "amount": attrs.IntValue(120),
		"price": attrs.DoubleValue(9.5), "vip": attrs.BoolValue(true), "tags": attrs.KeywordListValue("urgent", "eu"),
		"due": attrs.TimeValue(time.Date(2025, 2, 1, 12, 0, 0, 0, time.UTC)),
	}},
	{"h2", attrs.Builtins{Workflow: "expense", Status: status.Completed, CreatedAt: day(5), UpdatedAt: day(6)}, attrs.Set{
		"customer": attrs.StringValue("globex"), "amount": attrs.IntValue(80), "vip": attrs.BoolValue(false),
		"tags": attrs.KeywordListValue(), "due": attrs.TimeValue(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)),
	}},
	{"h3", attrs.Builtins{Workflow: "order", Status: status.Failed, CreatedAt: day(10), UpdatedAt: day(10)}, nil},
	{"h4", attrs.Builtins{Workflow: "expense", Status: status.Cancelled, CreatedAt: day(20), UpdatedAt: day(21)}, attrs.Set{
		"customer": attrs.StringValue("acme"), "amount": attrs.IntValue(100), "price": attrs.DoubleValue(-1),
		"tags": attrs.KeywordListValue("eu"),
	}},
	// amount was a string in an earlier version of the workflow; no times.
	{"h5", attrs.Builtins{Workflow: "expense", Status: status.Running}, attrs.Set{
		"customer": attrs.StringValue("Acme"), "amount": attrs.StringValue("120"),
	}},
}

// TestMatch: which of testHandlers each query matches.
func TestMatch(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{``, "h1 h2 h3 h4 h5"},
		{`order by amount`, "h1 h2 h3 h4 h5"},
		{`customer = "acme"`, "h1 h4"},
		{`customer != "acme"`, "h2 h5"},
		{`not customer = "acme"`, "h2 h3 h5"},
		{`not customer != "acme"`, "h1 h3 h4"},
		{`customer exists`, "h1 h2 h4 h5"},
		{`customer not exists`, "h3"},
		{`customer < "b"`, "h1 h4 h5"},
		{`customer > "B"`, "h1 h2 h4"},
		{`customer in ("globex", "Acme", "x")`, "h2 h5"},
		{`amount > 100`, "h1"},
		{`amount >= 100`, "h1 h4"},
		{`amount < 100`, "h2"},
		{`amount <= 100`, "h2 h4"},
		{`amount = 120`, "h1"},
		{`amount != 120`, "h2 h4"},
		{`not amount = 120`, "h2 h3 h4 h5"},
		{`amount in (80, 100)`, "h2 h4"},
		{`amount not in (80, 100)`, "h1 h3 h5"},
		{`amount exists`, "h1 h2 h4"}, // h5's amount is a string: missing
		{`price > 0`, "h1"},
		{`price > 9`, "h1"},
		{`price = 9.5`, "h1"},
		{`price < 0`, "h4"},
		{`price in (-1, 2.5)`, "h4"},
		{`vip = true`, "h1"},
		{`vip != true`, "h2"},
		{`vip = false`, "h2"},
		{`not vip = true`, "h2 h3 h4 h5"},
		{`tags contains "eu"`, "h1 h4"},
		{`tags contains "urgent"`, "h1"},
		{`tags contains "EU"`, ""},
		{`tags not contains "eu"`, "h2 h3 h5"},
		{`tags exists`, "h1 h2 h4"},
		{`due > "2025-02-01T12:00:00Z"`, "h2"},
		{`due >= "2025-02-01T13:00:00+01:00"`, "h1 h2"},
		{`due = "2025-02-01T12:00:00.000000Z"`, "h1"},
		{`due < "2025-02-01T12:00:00.000001Z"`, "h1"},
		{`due in ("2025-03-01T01:00:00+01:00")`, "h2"},
		{`status = running`, "h1 h5"},
		{`status = "running"`, "h1 h5"},
		{`status != running`, "h2 h3 h4"},
		{`status in (completed, failed)`, "h2 h3"},
		{`status not in (completed, failed)`, "h1 h4 h5"},
		{`workflow = "order"`, "h3"},
		{`workflow > "f"`, "h3"},
		{`created_at < "2025-01-05T00:00:00Z"`, "h1"},
		{`created_at >= "2025-01-05T00:00:00Z"`, "h2 h3 h4"},
		{`not created_at >= "2025-01-05T00:00:00Z"`, "h1 h5"},
		{`updated_at = "2025-01-10T00:00:00Z"`, "h3"},
		{`customer = "acme" and amount > 100 and status = running`, "h1"},
		{`customer = "acme" or workflow = "order"`, "h1 h3 h4"},
		{`not (customer = "acme" or amount < 100)`, "h3 h5"},
		{`(customer = "acme" or customer = "globex") and not tags contains "eu"`, "h2"},
		{`not not customer exists`, "h1 h2 h4 h5"},
	} {
		q, err := attrs.Parse(tc.q)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.q, err)
			continue
		}
		if err := q.Check(testSchema); err != nil {
			t.Errorf("Check(%q): %v", tc.q, err)
			continue
		}
		var got []string
		for _, h := range testHandlers {
			if q.Match(h.b, h.s) {
				got = append(got, h.name)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s matches %q, want %q", tc.q, strings.Join(got, " "), tc.want)
		}
	}
}

// TestMatchUnchecked: a query Check would refuse matches nothing it
// cannot compare, and does not panic.
func TestMatchUnchecked(t *testing.T) {
	for _, q := range []string{`amount = "120"`, `nope = 1`, `vip < true`, `tags = "eu"`, `customer contains "acme"`,
		`due > "soon"`, `status = 1`, `tags contains 1`, `amount in ("x")`} {
		parsed, err := attrs.Parse(q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", q, err)
		}
		for _, h := range testHandlers {
			want := q == `amount = "120"` && h.name == "h5" || q == `vip < true` && h.name == "h2"
			if got := parsed.Match(h.b, h.s); got != want {
				t.Errorf("%s on %s = %v, want %v", q, h.name, got, want)
			}
		}
	}
}

// TestMatchMissingBuiltins: a handler without status or times has none of
// them, in two-valued logic like attributes.
func TestMatchMissingBuiltins(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want bool
	}{
		{`status = running`, false}, {`status != running`, false}, {`not status = running`, true},
		{`workflow != "x"`, false}, {`created_at < "9999-01-01T00:00:00Z"`, false}, {`not updated_at > "0001-01-01T00:00:00Z"`, true},
	} {
		q, err := attrs.Parse(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Match(attrs.Builtins{}, nil); got != tc.want {
			t.Errorf("%s on a handler without built-in fields = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// TestMatchTimePrecision: built-in times compare to the microsecond, like
// stored ones.
func TestMatchTimePrecision(t *testing.T) {
	q, err := attrs.Parse(`created_at = "2025-01-01T00:00:00.000001Z"`)
	if err != nil {
		t.Fatal(err)
	}
	b := attrs.Builtins{CreatedAt: time.Date(2025, 1, 1, 0, 0, 0, 1999, time.UTC)}
	if !q.Match(b, nil) {
		t.Fatalf("%s does not match created_at %v", q, b.CreatedAt)
	}
}

// TestOrder: Order.Compare sorts by the field, missing last either way,
// and leaves ties to the store (a stable sort keeps the input order).
func TestOrder(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{`order by amount desc`, "h1 h4 h2 h3 h5"}, // h5's amount is a string: missing
		{`order by amount`, "h2 h4 h1 h3 h5"},
		{`order by customer`, "h5 h1 h4 h2 h3"},
		{`order by customer desc`, "h2 h1 h4 h5 h3"},
		{`order by price`, "h4 h1 h2 h3 h5"},
		{`order by due desc`, "h2 h1 h3 h4 h5"},
		{`order by created_at desc`, "h4 h3 h2 h1 h5"},
		{`order by workflow desc`, "h3 h1 h2 h4 h5"},
		{`customer = "x"`, "h1 h2 h3 h4 h5"}, // no order: ties everywhere
	} {
		q, err := attrs.Parse(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Check(testSchema); err != nil {
			t.Fatal(err)
		}
		hs := slices.Clone(testHandlers)
		slices.SortStableFunc(hs, func(a, b handler) int { return q.Order.Compare(a.b, a.s, b.b, b.s) })
		var got []string
		for _, h := range hs {
			got = append(got, h.name)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %q, want %q", tc.q, strings.Join(got, " "), tc.want)
		}
	}
}

// TestOrderUnchecked: an order Check has not seen sorts values of
// different types by type (h5's string amount before the ints).
func TestOrderUnchecked(t *testing.T) {
	q, err := attrs.Parse(`order by amount desc`)
	if err != nil {
		t.Fatal(err)
	}
	hs := slices.Clone(testHandlers)
	slices.SortStableFunc(hs, func(a, b handler) int { return q.Order.Compare(a.b, a.s, b.b, b.s) })
	var got []string
	for _, h := range hs {
		got = append(got, h.name)
	}
	if strings.Join(got, " ") != "h1 h4 h2 h5 h3" {
		t.Errorf("order by amount desc, unchecked: %q", got)
	}
	if (*attrs.Order)(nil).Compare(hs[0].b, hs[0].s, hs[1].b, hs[1].s) != 0 {
		t.Errorf("a nil Order tells handlers apart")
	}
}

// TestMatchChangedType: once checked, a query treats a value stored with
// another type than the schema's (the attribute's type changed in a later
// version of the workflow) as missing, as a typed index would; unchecked,
// it compares the literal as the value's type.
func TestMatchChangedType(t *testing.T) {
	old := attrs.Set{"price": attrs.IntValue(1), "due": attrs.StringValue("2025-01-01T00:00:00Z"), "tags": attrs.StringValue("x")}
	b := attrs.Builtins{Workflow: "expense", Status: status.Running}
	for _, tc := range []struct {
		q                  string
		checked, unchecked bool
	}{
		{`price = 1`, false, true},
		{`not price = 1`, true, false},
		{`price exists`, false, true},
		{`due = "2025-01-01T00:00:00Z"`, false, true},
		{`due in ("2025-01-01T00:00:00Z")`, false, true},
		{`tags exists`, false, true},
		{`tags contains "x"`, false, false},
		{`status = running and workflow = "expense"`, true, true},
	} {
		q, err := attrs.Parse(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Match(b, old); got != tc.unchecked {
			t.Errorf("%s, unchecked = %v, want %v", tc.q, got, tc.unchecked)
		}
		if err := q.Check(testSchema); err != nil {
			t.Fatal(err)
		}
		if got := q.Match(b, old); got != tc.checked {
			t.Errorf("%s, checked = %v, want %v", tc.q, got, tc.checked)
		}
	}
}
