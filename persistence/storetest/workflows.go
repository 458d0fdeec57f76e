package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// newDef returns a definition of name whose content, and so whose hash,
// is rev.
func newDef(name, rev string) persistence.WorkflowDef {
	t := baseTime()
	return persistence.WorkflowDef{
		Name:      name,
		Hash:      "sha256-" + rev,
		Def:       []byte("definition " + name + " " + rev),
		CreatedAt: t,
		UpdatedAt: t.Add(time.Minute),
		Source:    "worker-" + rev,
		Owner:     "subject-" + rev,
	}
}

func putDef(t *testing.T, s persistence.Store, d persistence.WorkflowDef, ifHash string) {
	t.Helper()
	if err := s.PutWorkflow(t.Context(), d, ifHash); err != nil {
		t.Fatalf("PutWorkflow(%s, if %q): %v", d.Name, ifHash, err)
	}
}

// checkDef fails the test unless the stored definition of want.Name is
// want. Times compare as instants, and come back in UTC.
func checkDef(t *testing.T, s persistence.Store, want persistence.WorkflowDef) {
	t.Helper()
	got, err := s.GetWorkflow(t.Context(), want.Name)
	if err != nil {
		t.Fatalf("GetWorkflow(%s): %v", want.Name, err)
	}
	if d := diffDef(got, want); d != "" {
		t.Fatalf("workflow %s: %s", want.Name, d)
	}
}

func diffDef(got, want persistence.WorkflowDef) string {
	switch {
	case got.Name != want.Name || got.Hash != want.Hash || got.Source != want.Source || got.Owner != want.Owner:
		return fmt.Sprintf("got %q %q %q %q, want %q %q %q %q", got.Name, got.Hash, got.Source, got.Owner, want.Name, want.Hash, want.Source, want.Owner)
	case !bytes.Equal(got.Def, want.Def):
		return fmt.Sprintf("Def = %q, want %q", got.Def, want.Def)
	case !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt):
		return fmt.Sprintf("times %v %v, want %v %v", got.CreatedAt, got.UpdatedAt, want.CreatedAt, want.UpdatedAt)
	case got.CreatedAt.Location() != time.UTC || got.UpdatedAt.Location() != time.UTC:
		return "times are not in UTC"
	}
	return ""
}

// testWorkflowDefs: a definition is created, read, replaced under each
// kind of condition and deleted, with the documented error for each
// condition that does not hold; nothing a failed call was given is stored.
func testWorkflowDefs(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	v1, v2, v3 := newDef("approval", "v1"), newDef("approval", "v2"), newDef("approval", "v3")

	if _, err := s.GetWorkflow(ctx, "approval"); err == nil {
		t.Fatal("GetWorkflow of an unknown workflow succeeded")
	} else {
		wantErr(t, "GetWorkflow of an unknown workflow", err, persistence.ErrNotFound)
	}
	wantErr(t, "PutWorkflow if a hash, none stored", s.PutWorkflow(ctx, v1, v1.Hash), persistence.ErrNotFound)
	putDef(t, s, v1, persistence.Absent)
	checkDef(t, s, v1)

	// The store keeps its own copy of Def.
	v1.Def[0] = 'X'
	v1.Def = []byte("definition approval v1")
	checkDef(t, s, v1)

	wantErr(t, "create-only PutWorkflow, one stored", s.PutWorkflow(ctx, v2, persistence.Absent), persistence.ErrExists)
	wantErr(t, "PutWorkflow if another hash", s.PutWorkflow(ctx, v2, "sha256-other"), persistence.ErrConflict)
	checkDef(t, s, v1)

	putDef(t, s, v2, v1.Hash) // the compare-and-swap a registration does
	checkDef(t, s, v2)
	wantErr(t, "PutWorkflow if the replaced hash", s.PutWorkflow(ctx, v3, v1.Hash), persistence.ErrConflict)
	putDef(t, s, v3, "") // unconditional
	checkDef(t, s, v3)
	putDef(t, s, v3, v3.Hash) // the same again changes nothing
	checkDef(t, s, v3)

	wantErr(t, "DeleteWorkflow if another hash", s.DeleteWorkflow(ctx, "approval", v2.Hash), persistence.ErrConflict)
	checkDef(t, s, v3)
	if err := s.DeleteWorkflow(ctx, "approval", v3.Hash); err != nil {
		t.Fatalf("DeleteWorkflow if the stored hash: %v", err)
	}
	wantErr(t, "GetWorkflow after delete", func() error { _, err := s.GetWorkflow(ctx, "approval"); return err }(), persistence.ErrNotFound)
	wantErr(t, "DeleteWorkflow of a deleted one", s.DeleteWorkflow(ctx, "approval", ""), persistence.ErrNotFound)
	wantErr(t, "DeleteWorkflow of a deleted one, if a hash", s.DeleteWorkflow(ctx, "approval", v3.Hash), persistence.ErrNotFound)

	// Deleted, the name is free for a create-only put, and an
	// unconditional delete removes it.
	putDef(t, s, v1, persistence.Absent)
	if err := s.DeleteWorkflow(ctx, "approval", ""); err != nil {
		t.Fatalf("unconditional DeleteWorkflow: %v", err)
	}
	if defs, err := s.ListWorkflowDefs(ctx); err != nil || len(defs) != 0 {
		t.Fatalf("ListWorkflowDefs after deletes = %v, %v; want none", defs, err)
	}
}

// testListWorkflowDefs: definitions list by name (byte order), whatever
// the order they were stored in, each with its latest content.
func testListWorkflowDefs(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	if defs, err := s.ListWorkflowDefs(ctx); err != nil || len(defs) != 0 {
		t.Fatalf("ListWorkflowDefs of an empty store = %v, %v", defs, err)
	}
	names := []string{"zeta", "Alpha", "alpha", "b", "alpha-v2", "é"}
	for _, n := range names {
		putDef(t, s, newDef(n, "1"), persistence.Absent)
	}
	putDef(t, s, newDef("b", "2"), "sha256-1")
	defs, err := s.ListWorkflowDefs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(names)
	slices.Sort(want)
	got := make([]string, len(defs))
	for i, d := range defs {
		got[i] = d.Name
		rev := "1"
		if d.Name == "b" {
			rev = "2"
		}
		if diff := diffDef(d, newDef(d.Name, rev)); diff != "" {
			t.Errorf("listed %s: %s", d.Name, diff)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ListWorkflowDefs names = %q, want %q", got, want)
	}
}

// testInvalidWorkflowDefs: definitions and arguments that break the
// documented rules fail with ErrInvalid and store nothing.
func testInvalidWorkflowDefs(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	good := newDef("w", "1")
	with := func(f func(d *persistence.WorkflowDef)) persistence.WorkflowDef {
		d := good
		f(&d)
		return d
	}
	for name, d := range map[string]persistence.WorkflowDef{
		"no name":             with(func(d *persistence.WorkflowDef) { d.Name = "" }),
		"name too long":       with(func(d *persistence.WorkflowDef) { d.Name = strings.Repeat("n", persistence.MaxWorkflowLen+1) }),
		"NUL in the name":     with(func(d *persistence.WorkflowDef) { d.Name = "a\x00b" }),
		"no hash":             with(func(d *persistence.WorkflowDef) { d.Hash = "" }),
		"hash too long":       with(func(d *persistence.WorkflowDef) { d.Hash = strings.Repeat("h", persistence.MaxHashLen+1) }),
		"hash Absent":         with(func(d *persistence.WorkflowDef) { d.Hash = persistence.Absent }),
		"no definition":       with(func(d *persistence.WorkflowDef) { d.Def = nil }),
		"definition too long": with(func(d *persistence.WorkflowDef) { d.Def = make([]byte, persistence.MaxDefLen+1) }),
		"source too long":     with(func(d *persistence.WorkflowDef) { d.Source = strings.Repeat("s", persistence.MaxSourceLen+1) }),
		"owner too long":      with(func(d *persistence.WorkflowDef) { d.Owner = strings.Repeat("o", persistence.MaxOwnerLen+1) }),
		"year 10000":          with(func(d *persistence.WorkflowDef) { d.UpdatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }),
	} {
		wantErr(t, "PutWorkflow with "+name, s.PutWorkflow(ctx, d, ""), persistence.ErrInvalid)
	}
	wantErr(t, "PutWorkflow with an ifHash too long", s.PutWorkflow(ctx, good, strings.Repeat("h", persistence.MaxHashLen+1)), persistence.ErrInvalid)
	wantErr(t, "PutWorkflow with a NUL in ifHash", s.PutWorkflow(ctx, good, "a\x00"), persistence.ErrInvalid)
	wantErr(t, "DeleteWorkflow if Absent", s.DeleteWorkflow(ctx, "w", persistence.Absent), persistence.ErrInvalid)
	wantErr(t, "DeleteWorkflow of no name", s.DeleteWorkflow(ctx, "", ""), persistence.ErrInvalid)
	_, err := s.GetWorkflow(ctx, "")
	wantErr(t, "GetWorkflow of no name", err, persistence.ErrInvalid)
	if defs, err := s.ListWorkflowDefs(ctx); err != nil || len(defs) != 0 {
		t.Fatalf("ListWorkflowDefs after invalid puts = %v, %v; want none", defs, err)
	}
	// At the limits, it is stored.
	big := with(func(d *persistence.WorkflowDef) {
		d.Name = strings.Repeat("n", persistence.MaxWorkflowLen)
		d.Hash = strings.Repeat("h", persistence.MaxHashLen)
		d.Def = bytes.Repeat([]byte{0xff}, persistence.MaxDefLen)
		d.Source = strings.Repeat("s", persistence.MaxSourceLen)
		d.Owner = strings.Repeat("o", persistence.MaxOwnerLen)
	})
	putDef(t, s, big, persistence.Absent)
	checkDef(t, s, big)
}

// testConcurrentWorkflowPuts: of concurrent puts under the same
// condition, exactly one wins and the others fail as if it had come
// first: ErrConflict for a compare-and-swap from the same hash, ErrExists
// for create-only puts. The stored definition is the winner's.
func testConcurrentWorkflowPuts(t *testing.T, open OpenFunc) {
	const n = 16
	s := openStore(t, open)
	putDef(t, s, newDef("cas", "base"), "")
	for _, tc := range []struct {
		name, ifHash string
		lose         error
	}{
		{"cas", "sha256-base", persistence.ErrConflict},
		{"create", persistence.Absent, persistence.ErrExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					errs[i] = s.PutWorkflow(t.Context(), newDef(tc.name, fmt.Sprint(i)), tc.ifHash)
				})
			}
			close(start)
			wg.Wait()
			winner := -1
			for i, err := range errs {
				switch {
				case err == nil && winner >= 0:
					t.Fatalf("puts %d and %d both won", winner, i)
				case err == nil:
					winner = i
				default:
					wantErr(t, fmt.Sprintf("put %d", i), err, tc.lose)
				}
			}
			if winner < 0 {
				t.Fatal("no put won")
			}
			checkDef(t, s, newDef(tc.name, fmt.Sprint(winner)))
		})
	}
}
