package postgres_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

var attrSchema = attrs.Schema{
	"customer": attrs.String,
	"amount":   attrs.Int,
	"price":    attrs.Double,
	"vip":      attrs.Bool,
	"due":      attrs.Time,
	"tags":     attrs.KeywordList,
}

func checkedQuery(t *testing.T, src string) *attrs.Query {
	t.Helper()
	q, err := attrs.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Check(attrSchema); err != nil {
		t.Fatal(err)
	}
	return q
}

var attrBase = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func attrHandler(id, workflow string, i int, set attrs.Set) persistence.Handler {
	at := attrBase.Add(time.Duration(i) * time.Second)
	return persistence.Handler{ID: id, Workflow: workflow, Status: persistence.StatusRunning,
		Residency: persistence.ResidencyActive, Owner: "replica-a", CreatedAt: at, UpdatedAt: at, Attributes: set}
}

func listIDs(t *testing.T, s persistence.Store, q persistence.Query) []string {
	t.Helper()
	hs, _, err := s.ListHandlers(t.Context(), q)
	if err != nil {
		t.Fatalf("ListHandlers(%v): %v", q.Where, err)
	}
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.ID
	}
	return ids
}

// TestWhereUsesIndexes: on some thousands of handlers, the statement
// that reads a listing's candidates reads the index of its driving term
// (wfd_handler_attrs' for an attribute, wfd_handlers' for a built-in
// field), never a sequential scan.
func TestWhereUsesIndexes(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	s, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	const n = 6000
	var changes []persistence.Change
	for i := range n {
		wf := []string{"orders", "invoices", "shipments"}[i%3]
		set := attrs.Set{
			"customer": attrs.StringValue(fmt.Sprintf("customer-%03d", i%301)),
			"amount":   attrs.IntValue(int64(i)),
			"price":    attrs.DoubleValue(float64(i) / 8),
			"vip":      attrs.BoolValue(i%50 == 0),
			"due":      attrs.TimeValue(attrBase.Add(time.Duration(i) * time.Minute)),
			"tags":     attrs.KeywordListValue(fmt.Sprintf("t%d", i%40), fmt.Sprintf("u%d", i%7)),
		}
		h := attrHandler(fmt.Sprintf("h%05d", i), wf, i, set)
		if i%11 == 0 {
			h.Status, h.Residency, h.Owner, h.CompletedAt = persistence.StatusFailed, persistence.ResidencyReleased, "", h.CreatedAt
		}
		changes = append(changes, persistence.Change{Handler: h, Create: true})
		if len(changes) == 500 {
			if err := s.Write(ctx, changes...); err != nil {
				t.Fatal(err)
			}
			changes = nil
		}
	}
	conn := connect(t, url)
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		where string
		index string // the index the plan reads
	}{
		{`customer = "customer-042"`, "wfd_handler_attrs_str"},
		{`customer = "customer-042" and amount > 100 and status = running`, "wfd_handler_attrs_str"},
		{`customer in ("customer-001", "customer-002")`, "wfd_handler_attrs_str"},
		{`tags contains "t7"`, "wfd_handler_attrs_str"},
		{`amount >= 100 and amount < 150`, "wfd_handler_attrs_num"},
		{`vip = true`, "wfd_handler_attrs_num"},
		{`price < 10`, "wfd_handler_attrs_num"},
		{`due < "2025-06-01T14:00:00Z"`, "wfd_handler_attrs_ts"},
		{`status = failed and customer exists`, "wfd_handlers_status"},
		{`created_at >= "2025-06-01T13:00:00Z" and customer exists`, ""},
	} {
		q := persistence.Query{Workflow: "orders", Where: checkedQuery(t, tt.where), PageSize: 20}
		sql, args, err := postgres.WhereSQL(&q)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, "EXPLAIN "+sql, args...)
		if err != nil {
			t.Fatalf("%s: EXPLAIN: %v", tt.where, err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		text := strings.Join(plan, "\n")
		t.Logf("%s:\n%s", tt.where, text)
		if strings.Contains(text, "Seq Scan") || !strings.Contains(text, tt.index) {
			t.Errorf("%s: the plan does not read %s, or scans a table:\n%s", tt.where, tt.index, text)
		}
		// And the listing answers it as Match does.
		if got := listIDs(t, s, q); len(got) == 0 {
			t.Errorf("%s: nothing listed", tt.where)
		}
	}
}

// TestAttributesMigration: migration 00008 applies on a database with
// handlers, which have no attribute rows until their attributes change;
// other listings see them as before, and going down drops the table.
func TestAttributesMigration(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	s := openShared(t, url, postgres.Options{})
	acme := attrs.Set{"customer": attrs.StringValue("acme")}
	a, b := attrHandler("a", "orders", 0, acme), attrHandler("b", "orders", 1, nil)
	if err := s.Write(ctx, persistence.Change{Handler: a, Create: true}, persistence.Change{Handler: b, Create: true}); err != nil {
		t.Fatal(err)
	}
	where := persistence.Query{Workflow: "orders", Where: checkedQuery(t, `customer = "acme"`)}
	if got := listIDs(t, s, where); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("before the round trip: %v", got)
	}
	_ = s.Close()
	if err := postgres.MigrateDownTo(ctx, url, 7); err != nil {
		t.Fatalf("migrating down to schema 7: %v", err)
	}
	conn := connect(t, url)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('wfd_handler_attrs') IS NOT NULL`).Scan(&exists); err != nil || exists {
		t.Fatalf("wfd_handler_attrs at schema 7: %v, %v", exists, err)
	}

	s = openShared(t, url, postgres.Options{})
	if got := listIDs(t, s, persistence.Query{Workflow: "orders"}); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("handlers after migrating up: %v", got)
	}
	if got := listIDs(t, s, where); len(got) != 0 {
		t.Fatalf("a handler indexed without attribute rows: %v", got)
	}
	// A change of its attributes indexes it.
	a.Attributes = attrs.Set{"customer": attrs.StringValue("acme"), "amount": attrs.IntValue(3)}
	b.Attributes = acme
	if err := s.Write(ctx, persistence.Change{Handler: a}, persistence.Change{Handler: b}); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s, where); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("after the attributes changed: %v", got)
	}
	// A change that leaves the attributes alone leaves their rows alone.
	xmin := func() (x []string) {
		rows, err := conn.Query(ctx, `SELECT xmin::text FROM wfd_handler_attrs WHERE handler_id = 'a' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			x = append(x, v)
		}
		return x
	}
	before := xmin()
	a.UpdatedAt = a.UpdatedAt.Add(time.Minute)
	a.Status = persistence.StatusCompleted
	a.CompletedAt = a.UpdatedAt
	a.Residency, a.Owner = persistence.ResidencyReleased, ""
	if err := s.Write(ctx, persistence.Change{Handler: a}); err != nil {
		t.Fatal(err)
	}
	if after := xmin(); len(before) != 2 || !slices.Equal(before, after) {
		t.Fatalf("attribute rows rewritten by a change that left the attributes alone: %v, then %v", before, after)
	}
	// Deleting a handler deletes its rows.
	if err := s.Write(ctx, persistence.Change{Handler: b, Delete: true}); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM wfd_handler_attrs WHERE handler_id = 'b'`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("rows of a deleted handler: %d, %v", rows, err)
	}
}
