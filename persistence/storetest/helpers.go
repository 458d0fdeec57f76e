package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/wfd-dev/wfd/persistence"
)

// baseTime is the suite's reference time. Not time.Now: the store must
// handle any time, and fixed times make failures reproducible. It has
// nanoseconds and a non-UTC zone to check both survive.
func baseTime() time.Time {
	return time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("X", 3600))
}

// newIDs returns n fresh UUIDv7 handler ids in ascending (creation) order.
func newIDs(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		u, err := uuid.NewV7()
		if err != nil {
			t.Fatalf("uuid: %v", err)
		}
		ids[i] = u.String()
	}
	// UUIDv7 from one process is monotonic; sorting makes it a fact.
	slices.Sort(ids)
	return ids
}

// newHandler returns a running, active handler with every scalar field set.
func newHandler(id, workflow string) persistence.Handler {
	t := baseTime()
	return persistence.Handler{
		ID:        id,
		Workflow:  workflow,
		Status:    persistence.StatusRunning,
		Residency: persistence.ResidencyActive,
		Owner:     "replica-a",
		CreatedAt: t,
		UpdatedAt: t.Add(time.Second),
		Parent:    "",
	}
}

func ptr[T any](v T) *T { return &v }

func write(t *testing.T, s persistence.Store, changes ...persistence.Change) {
	t.Helper()
	if err := s.Write(t.Context(), changes...); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

func getHandler(t *testing.T, s persistence.Store, id string) persistence.Handler {
	t.Helper()
	h, err := s.GetHandler(t.Context(), id)
	if err != nil {
		t.Fatalf("GetHandler(%s): %v", id, err)
	}
	return h
}

// wantErr fails the test unless err wraps target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// checkHandler fails the test unless got equals want.
func checkHandler(t *testing.T, got, want persistence.Handler) {
	t.Helper()
	if d := diffHandler(got, want); d != "" {
		t.Fatalf("handler %s: %s", want.ID, d)
	}
}

// diffHandler describes the first difference between two handlers, or
// returns "". Times compare as instants (the store may change the zone),
// byte slices by content (nil equals empty).
func diffHandler(got, want persistence.Handler) string {
	type field struct {
		name      string
		got, want any
		equal     bool
	}
	fields := []field{
		{"ID", got.ID, want.ID, got.ID == want.ID},
		{"Workflow", got.Workflow, want.Workflow, got.Workflow == want.Workflow},
		{"WorkflowVersion", got.WorkflowVersion, want.WorkflowVersion, got.WorkflowVersion == want.WorkflowVersion},
		{"Status", got.Status, want.Status, got.Status == want.Status},
		{"Residency", got.Residency, want.Residency, got.Residency == want.Residency},
		{"Owner", got.Owner, want.Owner, got.Owner == want.Owner},
		{"CreatedAt", got.CreatedAt, want.CreatedAt, got.CreatedAt.Equal(want.CreatedAt)},
		{"UpdatedAt", got.UpdatedAt, want.UpdatedAt, got.UpdatedAt.Equal(want.UpdatedAt)},
		{"CompletedAt", got.CompletedAt, want.CompletedAt, got.CompletedAt.Equal(want.CompletedAt)},
		{"IdleSince", got.IdleSince, want.IdleSince, got.IdleSince.Equal(want.IdleSince)},
		{"Error", got.Error, want.Error, got.Error == want.Error},
		{"Result", got.Result, want.Result, bytes.Equal(got.Result, want.Result)},
		{"Parent", got.Parent, want.Parent, got.Parent == want.Parent},
		{"LastSeq", got.LastSeq, want.LastSeq, got.LastSeq == want.LastSeq},
		{"External", got.External, want.External, slices.Equal(got.External, want.External)},
		{"Deadline", got.Deadline, want.Deadline, got.Deadline.Equal(want.Deadline)},
		{"Attributes", got.Attributes, want.Attributes, got.Attributes.Equal(want.Attributes)},
		{"len(Waiters)", len(got.Waiters), len(want.Waiters), len(got.Waiters) == len(want.Waiters)},
	}
	for _, f := range fields {
		if !f.equal {
			return fmt.Sprintf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	for i, g := range got.Waiters {
		w := want.Waiters[i]
		if g.ID != w.ID || g.Step != w.Step || g.EventType != w.EventType || !bytes.Equal(g.Match, w.Match) ||
			!g.Deadline.Equal(w.Deadline) || g.Key != w.Key {
			return fmt.Sprintf("Waiters[%d] = %+v, want %+v", i, g, w)
		}
	}
	return ""
}

func handlerIDs(hs []persistence.Handler) []string {
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.ID
	}
	return ids
}

// records returns records with the given sequence numbers and data derived
// from them.
func records(seqs ...uint64) []persistence.Record {
	rs := make([]persistence.Record, len(seqs))
	for i, s := range seqs {
		rs[i] = persistence.Record{Seq: s, Data: fmt.Appendf(nil, "record %d", s)}
	}
	return rs
}

func checkRecords(t *testing.T, what string, got, want []persistence.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d records %v, want %d", what, len(got), recordSeqs(got), len(want))
	}
	for i := range got {
		if got[i].Seq != want[i].Seq || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("%s: record %d = {%d %q}, want {%d %q}", what, i, got[i].Seq, got[i].Data, want[i].Seq, want[i].Data)
		}
	}
}

func recordSeqs(rs []persistence.Record) []uint64 {
	seqs := make([]uint64, len(rs))
	for i, r := range rs {
		seqs[i] = r.Seq
	}
	return seqs
}

// pageAll follows the pages of a listing (what, for errors) from the one
// token starts ("": the first) to the end: list returns the page a token
// starts and the next page's token. It returns every item and the number
// of pages, and fails the test on an error, a page of more than limit
// items, an empty page with a next page, or no end.
func pageAll[T any](t *testing.T, what string, limit int, token string, list func(token string) ([]T, string, error)) (all []T, pages int) {
	t.Helper()
	for ; ; pages++ {
		items, next, err := list(token)
		switch {
		case err != nil:
			t.Fatalf("%s page %d: %v", what, pages, err)
		case len(items) > limit:
			t.Fatalf("%s page %d: %d items, more than the page size", what, pages, len(items))
		case next != "" && len(items) == 0:
			t.Fatalf("%s page %d: empty page with a next page token", what, pages)
		case pages > 10000:
			t.Fatalf("%s: no end after %d pages", what, pages)
		}
		all = append(all, items...)
		if next == "" {
			return all, pages + 1
		}
		token = next
	}
}
