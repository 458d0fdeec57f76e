package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/persistence"
)

// attrSchema is the schema of the attribute tests' workflow "orders".
var attrSchema = attrs.Schema{
	"customer": attrs.String,
	"amount":   attrs.Int,
	"price":    attrs.Double,
	"vip":      attrs.Bool,
	"due":      attrs.Time,
	"tags":     attrs.KeywordList,
}

// attrHandler is one handler of the attribute tests: its id's index i
// gives its creation time (base + i seconds), so newest first is
// descending i.
type attrHandler struct {
	workflow string
	status   persistence.Status
	set      attrs.Set
}

// writeAttrHandlers stores hs, handler i created at base + i seconds, and
// returns their ids.
func writeAttrHandlers(t *testing.T, s persistence.Store, hs []attrHandler) []string {
	t.Helper()
	ids := newIDs(t, len(hs))
	changes := make([]persistence.Change, len(hs))
	for i, a := range hs {
		h := newHandler(ids[i], a.workflow)
		h.CreatedAt = baseTime().Add(time.Duration(i) * time.Second)
		h.UpdatedAt = h.CreatedAt
		if a.status != 0 {
			h.Status = a.status
			if a.status.Terminal() {
				h.CompletedAt = h.CreatedAt
				h.Residency = persistence.ResidencyReleased
				h.Owner = ""
			}
		}
		h.Attributes = a.set
		changes[i] = persistence.Change{Handler: h, Create: true}
	}
	write(t, s, changes...)
	return ids
}

// where parses and checks a query against attrSchema.
func where(t *testing.T, src string) *attrs.Query {
	t.Helper()
	q, err := attrs.Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	if err := q.Check(attrSchema); err != nil {
		t.Fatalf("Check(%q): %v", src, err)
	}
	return q
}

// pickIDs returns ids[i] for each i of is, in that order.
func pickIDs(ids []string, is ...int) []string {
	out := make([]string, len(is))
	for i, n := range is {
		out[i] = ids[n]
	}
	return out
}

func day(d int) attrs.Value {
	return attrs.TimeValue(time.Date(2025, 7, d, 12, 0, 0, 0, time.UTC))
}

// attrFixture is 12 handlers of "orders" (and two of "other", with the
// same attribute names, that no query on orders may return).
func attrFixture() []attrHandler {
	str, num, dbl, tags := attrs.StringValue, attrs.IntValue, attrs.DoubleValue, attrs.KeywordListValue
	return []attrHandler{
		0:  {"orders", 0, attrs.Set{"customer": str("acme"), "amount": num(50), "tags": tags("urgent", "eu")}},
		1:  {"orders", 0, attrs.Set{"customer": str("acme"), "amount": num(150), "price": dbl(9.5), "due": day(3)}},
		2:  {"orders", persistence.StatusCompleted, attrs.Set{"customer": str("acme"), "amount": num(300), "vip": attrs.BoolValue(true)}},
		3:  {"orders", 0, attrs.Set{"customer": str("globex"), "amount": num(120), "tags": tags("eu")}},
		4:  {"orders", 0, attrs.Set{"customer": str("initech"), "amount": num(-7), "price": dbl(-1.25), "due": day(1)}},
		5:  {"orders", 0, attrs.Set{"amount": num(101)}},
		6:  {"other", 0, attrs.Set{"customer": str("acme"), "amount": num(1000)}},
		7:  {"orders", 0, nil},
		8:  {"orders", persistence.StatusFailed, attrs.Set{"customer": str("acme"), "tags": tags("urgent")}},
		9:  {"orders", 0, attrs.Set{"customer": str("ac"), "amount": num(100), "due": day(2)}},
		10: {"orders", 0, attrs.Set{"customer": str("acme corp"), "amount": num(100)}},
		11: {"other", 0, attrs.Set{"customer": str("globex"), "tags": tags("urgent")}},
		// An attribute whose type changed between versions: a string
		// amount counts as missing for the int amount of the schema.
		12: {"orders", 0, attrs.Set{"customer": str("hooli"), "amount": str("lots")}},
		13: {"orders", 0, attrs.Set{"customer": str("acme"), "amount": num(150), "price": dbl(20)}},
	}
}

// testAttributes: attributes are stored with the metadata, read back
// exactly, replaced by an update (not merged: the engine merges) and
// removed when the update has none; invalid ones are refused.
func testAttributes(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	id := newIDs(t, 1)[0]
	h := newHandler(id, "orders")
	h.Attributes = attrs.Set{
		"customer": attrs.StringValue("acme co ü"),
		"amount":   attrs.IntValue(attrs.MaxInt),
		"price":    attrs.DoubleValue(-0.5),
		"vip":      attrs.BoolValue(false),
		"due":      attrs.TimeValue(time.Date(2025, 7, 1, 9, 30, 0, 123456000, time.FixedZone("Y", -7200))),
		"tags":     attrs.KeywordListValue("b", "a", "b"),
	}
	write(t, s, persistence.Change{Handler: h, Create: true})
	checkHandler(t, getHandler(t, s, id), h)

	h.Attributes = attrs.Set{"customer": attrs.StringValue("globex")}
	write(t, s, persistence.Change{Handler: h})
	checkHandler(t, getHandler(t, s, id), h)
	hs, _, err := s.ListHandlers(t.Context(), persistence.Query{Workflow: "orders", Where: where(t, `customer = "acme co ü"`)})
	if err != nil || len(hs) != 0 {
		t.Fatalf("old attribute value still listed: %v, %v", handlerIDs(hs), err)
	}

	h.Attributes = nil
	write(t, s, persistence.Change{Handler: h})
	checkHandler(t, getHandler(t, s, id), h)

	bad := h
	bad.Attributes = attrs.Set{"Bad Name": attrs.IntValue(1)}
	wantErr(t, "invalid attribute name", s.Write(t.Context(), persistence.Change{Handler: bad}), persistence.ErrInvalid)
	checkHandler(t, getHandler(t, s, id), h)
}

// testListWhere: conditions select through any usable term, the rest of
// the condition filters, the other filters of the query still apply, and
// results are newest first.
func testListWhere(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := writeAttrHandlers(t, s, attrFixture())
	want := func(is ...int) []string { return pickIDs(ids, is...) }
	tests := []struct {
		where    string
		q        persistence.Query
		want     []string
		workflow string
	}{
		{where: `customer = "acme"`, want: want(13, 8, 2, 1, 0)},
		{where: `customer = "acme" and amount > 100`, want: want(13, 2, 1)},
		{where: `customer = "acme" and amount > 100 and status = running`, want: want(13, 1)},
		{where: `customer in ("globex", "initech", "nobody")`, want: want(4, 3)},
		{where: `tags contains "urgent"`, want: want(8, 0)},
		{where: `tags contains "eu" and customer != "acme"`, want: want(3)},
		{where: `amount >= 100 and amount < 150`, want: want(10, 9, 5, 3)},
		{where: `amount > 100`, want: want(13, 5, 3, 2, 1)},
		{where: `amount < 0`, want: want(4)},
		{where: `price < 0`, want: want(4)},
		{where: `price >= 9.5`, want: want(13, 1)},
		{where: `vip = true`, want: want(2)},
		{where: `due <= "2025-07-02T12:00:00Z"`, want: want(9, 4)},
		{where: `due > "2025-07-01T12:00:00Z" and not customer = "acme"`, want: want(9)},
		{where: `customer = "ac"`, want: want(9)},
		{where: `customer >= "acme" and customer < "acmf"`, want: want(13, 10, 8, 2, 1, 0)},
		{where: `customer = "acme" and (amount = 50 or tags exists)`, want: want(8, 0)},
		{where: `customer = "hooli" and amount exists`, want: want()},
		{where: `status = failed`, want: want(8)},
		{where: `status in (completed, failed) and customer = "acme"`, want: want(8, 2)},
		{where: `workflow = "orders" and vip = false`, want: want()},
		{where: `created_at >= "2025-03-14T14:09:36.535897Z" and customer exists`, want: want(13, 12, 10)},
		{where: `customer = "acme"`, q: persistence.Query{Statuses: []persistence.Status{persistence.StatusRunning}}, want: want(13, 1, 0)},
		{where: `customer = "acme"`, q: persistence.Query{Residency: persistence.ResidencyReleased}, want: want(8, 2)},
		{where: `customer = "acme"`, workflow: "other", want: want(6)},
		{where: `tags contains "urgent"`, workflow: "other", want: want(11)},
		{where: `customer = "nobody"`, want: want()},
	}
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			q := tt.q
			q.Workflow = "orders"
			if tt.workflow != "" {
				q.Workflow = tt.workflow
			}
			q.Where = where(t, tt.where)
			hs, next, err := s.ListHandlers(t.Context(), q)
			if err != nil {
				t.Fatalf("ListHandlers: %v", err)
			}
			if got := handlerIDs(hs); !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			if next != "" {
				t.Fatalf("next page token %q on the only page", next)
			}
			for _, h := range hs {
				if len(h.Attributes) == 0 {
					t.Fatalf("handler %s listed without its attributes", h.ID)
				}
			}
		})
	}
	// A built-in condition needs no workflow.
	hs, _, err := s.ListHandlers(t.Context(), persistence.Query{Where: where(t, `status = failed`)})
	if got := handlerIDs(hs); err != nil || !slices.Equal(got, want(8)) {
		t.Fatalf("status = failed across workflows: %v, %v", got, err)
	}
}

// testListWhereOrder: order by sorts by an attribute or built-in field,
// handlers without it last, ties newest first.
func testListWhereOrder(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := writeAttrHandlers(t, s, attrFixture())
	want := func(is ...int) []string { return pickIDs(ids, is...) }
	tests := []struct {
		where, workflow string
		want            []string
	}{
		{where: `customer = "acme" order by amount`, want: want(0, 13, 1, 2, 8)},
		{where: `customer = "acme" order by amount desc`, want: want(2, 13, 1, 0, 8)},
		{where: `amount > 0 order by price desc`, want: want(13, 1, 10, 9, 5, 3, 2, 0)},
		{where: `order by due`, want: want(4, 9, 1, 13, 12, 10, 8, 7, 5, 3, 2, 0)},
		{where: `order by customer desc`, workflow: "other", want: want(11, 6)},
		{where: `customer = "acme" order by created_at`, want: want(0, 1, 2, 8, 13)},
	}
	for _, tt := range tests {
		t.Run(tt.where, func(t *testing.T) {
			wf := "orders"
			if tt.workflow != "" {
				wf = tt.workflow
			}
			got, pages := pageAll(t, tt.where, 2, "", func(token string) ([]persistence.Handler, string, error) {
				return s.ListHandlers(t.Context(), persistence.Query{Workflow: wf, Where: where(t, tt.where), PageSize: 2, PageToken: token})
			})
			if ids := handlerIDs(got); !slices.Equal(ids, tt.want) {
				t.Fatalf("got %v, want %v", ids, tt.want)
			}
			if wantPages := max(1, (len(tt.want)+1)/2); pages != wantPages {
				t.Fatalf("%d pages, want %d", pages, wantPages)
			}
		})
	}
}

// testListWhereRefused: a condition no index answers is refused with
// ErrUnindexed (wrapping ErrInvalid) rather than scanned; conditions on
// attributes need a workflow.
func testListWhereRefused(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	writeAttrHandlers(t, s, attrFixture())
	for _, src := range []string{
		`customer = "acme" or amount > 100`,
		`customer != "acme"`,
		`not customer = "acme"`,
		`tags exists`,
		`updated_at > "2025-01-01T00:00:00Z"`,
		`customer exists and not (vip = true)`,
	} {
		_, _, err := s.ListHandlers(t.Context(), persistence.Query{Workflow: "orders", Where: where(t, src)})
		if !errors.Is(err, persistence.ErrUnindexed) || !errors.Is(err, persistence.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrUnindexed", src, err)
		}
	}
	_, _, err := s.ListHandlers(t.Context(), persistence.Query{Where: where(t, `customer = "acme"`)})
	wantErr(t, "a condition on attributes without a workflow", err, persistence.ErrInvalid)
}

// testListWherePaging: pages of a filtered listing continue where the
// previous ended, across many candidates that the rest of the condition
// filters out, and ordered pages too.
func testListWherePaging(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	const n = 60
	hs := make([]attrHandler, n)
	var wantIDs []int
	for i := range hs {
		hs[i] = attrHandler{"orders", 0, attrs.Set{"customer": attrs.StringValue("acme"), "amount": attrs.IntValue(int64(i % 7))}}
		if i%7 == 3 {
			wantIDs = append([]int{i}, wantIDs...)
		}
	}
	ids := writeAttrHandlers(t, s, hs)
	var want []string
	for _, i := range wantIDs {
		want = append(want, ids[i])
	}
	for _, size := range []int{1, 3, 100} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			got, _ := pageAll(t, "filtered", size, "", func(token string) ([]persistence.Handler, string, error) {
				return s.ListHandlers(t.Context(), persistence.Query{Workflow: "orders", Where: where(t, `customer = "acme" and amount = 3`), PageSize: size, PageToken: token})
			})
			if g := handlerIDs(got); !slices.Equal(g, want) {
				t.Fatalf("got %v, want %v", g, want)
			}
		})
	}
	// A token of another query is refused.
	_, next, err := s.ListHandlers(t.Context(), persistence.Query{Workflow: "orders", Where: where(t, `customer = "acme"`), PageSize: 2})
	if err != nil || next == "" {
		t.Fatalf("first page: %q, %v", next, err)
	}
	_, _, err = s.ListHandlers(t.Context(), persistence.Query{Workflow: "orders", Where: where(t, `amount = 3`), PageSize: 2, PageToken: next})
	wantErr(t, "token of another query", err, persistence.ErrInvalid)
}
