package attrs_test

import (
	"errors"
	"testing"

	"github.com/wfd-dev/wfd/attrs"
)

// TestCheck: queries that fit the schema.
func TestCheck(t *testing.T) {
	for _, q := range []string{
		``,
		`customer = "acme" and amount > 100 and status = running`,
		`customer != "acme" or customer < "b" or customer <= "b" or customer > "a" or customer >= "a"`,
		`customer in ("acme", "globex") and region exists and not region = "eu"`,
		`tags contains "urgent" and tags exists and tags not contains "x"`,
		`amount = 1 and amount in (1, 2, -3) and amount exists`,
		`price = 1 and price > 1.5 and price in (1, 2.5) and price < -1e3`,
		`vip = true and vip != false and vip in (true) and vip exists`,
		`due > "2025-01-31T09:00:00Z" and due <= "2025-01-31T10:00:00.123456+02:00" and due in ("2025-01-01T00:00:00Z")`,
		`workflow = "expense" and workflow in ("a", "b") and workflow < "m"`,
		`status = running and status != "failed" and status in (completed, failed, cancelled)`,
		`created_at > "2025-01-01T00:00:00Z" and updated_at <= "2025-01-01T00:00:00Z" and created_at in ("2025-01-01T00:00:00Z")`,
		`not (not customer = "a" or (amount = 1 and vip = true))`,
		`order by customer`, `order by amount desc`, `order by price`, `order by due`,
		`order by workflow`, `order by created_at`, `order by updated_at desc`,
	} {
		parsed, err := attrs.Parse(q)
		if err != nil {
			t.Errorf("Parse(%q): %v", q, err)
			continue
		}
		if err := parsed.Check(testSchema); err != nil {
			t.Errorf("Parse(%q).Check: %v", q, err)
		}
	}
}

// TestCheckErrors: queries that do not fit are *TypeErrors wrapping
// ErrInvalid, at the offending term.
func TestCheckErrors(t *testing.T) {
	for _, tc := range []struct {
		q   string
		pos int
		msg string
	}{
		{`amout = 1`, 1, `unknown attribute "amout"`},
		{`Customer = "x"`, 1, `unknown attribute "Customer" (names are lowercase: customer)`},
		{`Status = running`, 1, `unknown attribute "Status" (names are lowercase: status)`},
		{`customer = "a" and nope exists`, 20, `unknown attribute "nope"`},
		{`amount = "x"`, 10, `"amount" is an int: want an integer, got "x"`},
		{`amount = 1.5`, 10, `"amount" is an int: want an integer, got 1.5`},
		{`amount in (1, "x")`, 15, `"amount" is an int: want an integer, got "x"`},
		{`amount = true`, 10, `"amount" is an int: want an integer, got true`},
		{`price > "1"`, 9, `"price" is a double: want a number, got "1"`},
		{`customer = 1`, 12, `"customer" is a string: want a string in double quotes, got 1`},
		{`vip = "true"`, 7, `"vip" is a bool: want true or false, got "true"`},
		{`vip < true`, 5, `"<" does not apply to "vip", a bool (use = or !=)`},
		{`vip >= false`, 5, `">=" does not apply to "vip", a bool (use = or !=)`},
		{`tags = "x"`, 6, `"=" does not apply to "tags", a keyword_list (use contains)`},
		{`tags > "x"`, 6, `">" does not apply to "tags", a keyword_list (use contains)`},
		{`tags in ("x")`, 1, `in does not apply to "tags", a keyword_list (use contains)`},
		{`tags contains 1`, 15, `"tags" is a keyword_list: want a string in double quotes, got 1`},
		{`customer contains "x"`, 1, `contains applies to a keyword_list, not to "customer", a string`},
		{`created_at contains "x"`, 1, `contains applies to a keyword_list, not to created_at, a time`},
		{`due > "yesterday"`, 7, `"due" is a time: want an RFC 3339 time in double quotes, such as "2025-01-31T09:00:00Z", got "yesterday"`},
		{`due > "2025-01-31"`, 7, `"due" is a time: want an RFC 3339 time in double quotes, such as "2025-01-31T09:00:00Z", got "2025-01-31"`},
		{`due > 1738314000`, 7, `"due" is a time: want an RFC 3339 time in double quotes, such as "2025-01-31T09:00:00Z", got 1738314000`},
		{`due > "2025-01-31T09:00:00.0000001Z"`, 7, `"due" is a time: time "2025-01-31T09:00:00.0000001Z" is finer than a microsecond`},
		{`created_at > "now"`, 14, `created_at is a time: want an RFC 3339 time in double quotes, such as "2025-01-31T09:00:00Z", got "now"`},
		{`workflow = 1`, 12, `workflow is a string: want a string in double quotes, got 1`},
		{`status = runing`, 10, `runing is not a status (running, completed, failed or cancelled)`},
		{`status = "Running"`, 10, `"Running" is not a status (running, completed, failed or cancelled)`},
		{`status in (running, 1)`, 21, `1 is not a status (running, completed, failed or cancelled)`},
		{`status < running`, 8, `"<" does not apply to status (use =, != or in)`},
		{`status contains "x"`, 1, `contains applies to a keyword_list, not to status`},
		{`status exists`, 1, `status always exists`},
		{`not created_at exists`, 5, `created_at always exists`},
		{`not (customer = "a" or amount = "x")`, 33, `"amount" is an int: want an integer, got "x"`},
		{`order by nope`, 10, `unknown attribute "nope"`},
		{`order by tags`, 10, `cannot order by "tags", a keyword_list (order by a string, int, double or time)`},
		{`order by vip desc`, 10, `cannot order by "vip", a bool (order by a string, int, double or time)`},
		{`order by status`, 10, `cannot order by status (order by a string, int, double or time)`},
		{`amount = "x" order by nope`, 10, `"amount" is an int: want an integer, got "x"`},
	} {
		q, err := attrs.Parse(tc.q)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.q, err)
			continue
		}
		err = q.Check(testSchema)
		var te *attrs.TypeError
		if !errors.As(err, &te) || !errors.Is(err, attrs.ErrInvalid) {
			t.Errorf("Check(%q) = %v, want a *TypeError wrapping ErrInvalid", tc.q, err)
			continue
		}
		if te.Pos != tc.pos || te.Msg != tc.msg {
			t.Errorf("Check(%q) = position %d: %s\n                want position %d: %s", tc.q, te.Pos, te.Msg, tc.pos, tc.msg)
		}
	}
}

// TestCheckEmptySchema: a workflow that declares nothing still has the
// built-in fields.
func TestCheckEmptySchema(t *testing.T) {
	q, err := attrs.Parse(`workflow = "x" and status in (running) and created_at > "2025-01-01T00:00:00Z" order by updated_at`)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Check(nil); err != nil {
		t.Fatalf("Check(nil): %v", err)
	}
	q, _ = attrs.Parse(`amount > 1`)
	if err := q.Check(nil); err == nil || err.Error() != `position 1: unknown attribute "amount"` {
		t.Fatalf("Check(nil) = %v", err)
	}
}
