package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// newDef returns version of name, current, whose content, and so whose
// hash, is rev; later versions (by rev) are created later, so that the
// listing order by creation time is the order of the calls.
func newDef(name, version, rev string) persistence.WorkflowDef {
	t := baseTime()
	return persistence.WorkflowDef{
		Name:      name,
		Version:   version,
		Current:   true,
		Hash:      "sha256-" + rev,
		Def:       []byte("definition " + name + " " + version + " " + rev),
		CreatedAt: t,
		UpdatedAt: t.Add(time.Minute),
		Source:    "worker-" + rev,
		Owner:     "subject-" + rev,
	}
}

func putDef(t *testing.T, s persistence.Store, d persistence.WorkflowDef, ifHash string) {
	t.Helper()
	if err := s.PutWorkflow(t.Context(), d, ifHash); err != nil {
		t.Fatalf("PutWorkflow(%s %s, if %q): %v", d.Name, d.Version, ifHash, err)
	}
}

// checkDef fails the test unless the stored version want.Version of
// want.Name is want. Times compare as instants, and come back in UTC.
func checkDef(t *testing.T, s persistence.Store, want persistence.WorkflowDef) {
	t.Helper()
	got, err := s.GetWorkflow(t.Context(), want.Name, want.Version)
	if err != nil {
		t.Fatalf("GetWorkflow(%s, %s): %v", want.Name, want.Version, err)
	}
	if d := diffDef(got, want); d != "" {
		t.Fatalf("workflow %s version %s: %s", want.Name, want.Version, d)
	}
}

// checkCurrent fails the test unless the current version of name is
// version, and every other version of name stored is not current.
func checkCurrent(t *testing.T, s persistence.Store, name, version string) {
	t.Helper()
	got, err := s.GetWorkflow(t.Context(), name, "")
	if err != nil || got.Version != version || !got.Current {
		t.Fatalf("current version of %s = %q (current %v), %v; want %q", name, got.Version, got.Current, err, version)
	}
	defs, err := s.ListWorkflowDefs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if d.Name == name && d.Current != (d.Version == version) {
			t.Fatalf("version %s of %s: Current = %v, the current version is %s", d.Version, name, d.Current, version)
		}
	}
}

func diffDef(got, want persistence.WorkflowDef) string {
	switch {
	case got.Name != want.Name || got.Version != want.Version || got.Current != want.Current:
		return fmt.Sprintf("got %q %q current %v, want %q %q current %v", got.Name, got.Version, got.Current, want.Name, want.Version, want.Current)
	case got.Hash != want.Hash || got.Source != want.Source || got.Owner != want.Owner:
		return fmt.Sprintf("got %q %q %q, want %q %q %q", got.Hash, got.Source, got.Owner, want.Hash, want.Source, want.Owner)
	case !bytes.Equal(got.Def, want.Def):
		return fmt.Sprintf("Def = %q, want %q", got.Def, want.Def)
	case !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt):
		return fmt.Sprintf("times %v %v, want %v %v", got.CreatedAt, got.UpdatedAt, want.CreatedAt, want.UpdatedAt)
	case got.CreatedAt.Location() != time.UTC || got.UpdatedAt.Location() != time.UTC:
		return "times are not in UTC"
	}
	return ""
}

func getErr(s persistence.Store, t *testing.T, name, version string) error {
	_, err := s.GetWorkflow(t.Context(), name, version)
	return err
}

// testWorkflowDefs: a version is created, read, replaced under each kind
// of condition and deleted, with the documented error for each condition
// that does not hold; a condition concerns its own version only; nothing
// a failed call was given is stored.
func testWorkflowDefs(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	v1, v2, v3 := newDef("approval", "1", "a"), newDef("approval", "1", "b"), newDef("approval", "1", "c")

	wantErr(t, "GetWorkflow of an unknown workflow", getErr(s, t, "approval", ""), persistence.ErrNotFound)
	wantErr(t, "GetWorkflow of an unknown version", getErr(s, t, "approval", "1"), persistence.ErrNotFound)
	wantErr(t, "PutWorkflow if a hash, none stored", s.PutWorkflow(ctx, v1, v1.Hash), persistence.ErrNotFound)
	putDef(t, s, v1, persistence.Absent)
	checkDef(t, s, v1)
	checkCurrent(t, s, "approval", "1")

	// The store keeps its own copy of Def.
	v1.Def[0] = 'X'
	v1.Def = []byte("definition approval 1 a")
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

	// Another version: create-only succeeds, its condition does not see
	// version 1's hash, and version 1 stays as it was.
	other := newDef("approval", "2", "x")
	wantErr(t, "PutWorkflow of version 2 if version 1's hash", s.PutWorkflow(ctx, other, v3.Hash), persistence.ErrNotFound)
	putDef(t, s, other, persistence.Absent)
	v3.Current = false
	checkDef(t, s, v3)
	checkCurrent(t, s, "approval", "2")

	wantErr(t, "DeleteWorkflow if another hash", s.DeleteWorkflow(ctx, "approval", "1", v2.Hash), persistence.ErrConflict)
	checkDef(t, s, v3)
	if err := s.DeleteWorkflow(ctx, "approval", "1", v3.Hash); err != nil {
		t.Fatalf("DeleteWorkflow if the stored hash: %v", err)
	}
	wantErr(t, "GetWorkflow after delete", getErr(s, t, "approval", "1"), persistence.ErrNotFound)
	checkDef(t, s, other) // the other version stays
	wantErr(t, "DeleteWorkflow of a deleted one", s.DeleteWorkflow(ctx, "approval", "1", ""), persistence.ErrNotFound)
	wantErr(t, "DeleteWorkflow of a deleted one, if a hash", s.DeleteWorkflow(ctx, "approval", "1", v3.Hash), persistence.ErrNotFound)

	// Deleting the current version leaves the name without one.
	if err := s.DeleteWorkflow(ctx, "approval", "2", ""); err != nil {
		t.Fatalf("unconditional DeleteWorkflow: %v", err)
	}
	wantErr(t, "GetWorkflow of the current version, none stored", getErr(s, t, "approval", ""), persistence.ErrNotFound)

	// Deleted, the version is free for a create-only put.
	v1.Current = true
	putDef(t, s, v1, persistence.Absent)
	if defs, err := s.ListWorkflowDefs(ctx); err != nil || len(defs) != 1 {
		t.Fatalf("ListWorkflowDefs = %v, %v; want version 1", defs, err)
	}
}

// testWorkflowVersions: several versions of a name; the current mark
// moves with PutWorkflow(Current) and SetCurrentWorkflow and stays with a
// put that is not current; GetWorkflow(name, "") is the current one; a
// delete of every version leaves other names alone.
func testWorkflowVersions(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	a, b, c := newDef("w", "a", "1"), newDef("w", "b", "2"), newDef("w", "c", "3")
	c.Current = false
	putDef(t, s, a, persistence.Absent)
	putDef(t, s, newDef("neighbour", "a", "9"), persistence.Absent)
	checkCurrent(t, s, "w", "a")
	putDef(t, s, b, persistence.Absent) // current: takes the mark from a
	checkCurrent(t, s, "w", "b")
	putDef(t, s, c, persistence.Absent) // not current: the mark stays
	checkCurrent(t, s, "w", "b")
	checkDef(t, s, c)

	if err := s.SetCurrentWorkflow(ctx, "w", "a"); err != nil {
		t.Fatalf("SetCurrentWorkflow(w, a): %v", err)
	}
	checkCurrent(t, s, "w", "a")
	if err := s.SetCurrentWorkflow(ctx, "w", "a"); err != nil {
		t.Fatalf("SetCurrentWorkflow of the current version: %v", err)
	}
	wantErr(t, "SetCurrentWorkflow of an unknown version", s.SetCurrentWorkflow(ctx, "w", "zz"), persistence.ErrNotFound)
	wantErr(t, "SetCurrentWorkflow of an unknown name", s.SetCurrentWorkflow(ctx, "nobody", "a"), persistence.ErrNotFound)
	checkCurrent(t, s, "w", "a") // a failed call moves nothing
	checkCurrent(t, s, "neighbour", "a")

	// A put that is not current, over the current version, unmarks it: the
	// caller stores what it says.
	a.Current = false
	putDef(t, s, a, "")
	wantErr(t, "GetWorkflow with no current version", getErr(s, t, "w", ""), persistence.ErrNotFound)
	checkDef(t, s, a)
	if err := s.SetCurrentWorkflow(ctx, "w", "c"); err != nil {
		t.Fatal(err)
	}
	checkCurrent(t, s, "w", "c")

	if err := s.DeleteWorkflow(ctx, "w", "", ""); err != nil {
		t.Fatalf("DeleteWorkflow of every version: %v", err)
	}
	for _, v := range []string{"", "a", "b", "c"} {
		wantErr(t, "GetWorkflow(w, "+v+") after deleting every version", getErr(s, t, "w", v), persistence.ErrNotFound)
	}
	wantErr(t, "DeleteWorkflow of every version, none stored", s.DeleteWorkflow(ctx, "w", "", ""), persistence.ErrNotFound)
	checkCurrent(t, s, "neighbour", "a")
}

// testListWorkflowDefs: versions list by name (byte order), then creation
// time, then version, whatever the order they were stored in, each with
// its latest content and mark.
func testListWorkflowDefs(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	if defs, err := s.ListWorkflowDefs(ctx); err != nil || len(defs) != 0 {
		t.Fatalf("ListWorkflowDefs of an empty store = %v, %v", defs, err)
	}
	names := []string{"zeta", "Alpha", "alpha", "b", "alpha-v2", "é"}
	for _, n := range names {
		putDef(t, s, newDef(n, "v", "1"), persistence.Absent)
	}
	putDef(t, s, newDef("b", "v", "2"), "sha256-1")
	// Versions of b: "z" created first, "a" and "m" later at the same time.
	early, late1, late2 := newDef("b", "z", "3"), newDef("b", "a", "4"), newDef("b", "m", "5")
	early.CreatedAt = early.CreatedAt.Add(-time.Hour)
	late1.CreatedAt = late1.CreatedAt.Add(time.Hour)
	late2.CreatedAt = late1.CreatedAt
	for _, d := range []persistence.WorkflowDef{late2, early, late1} {
		d.Current = false
		putDef(t, s, d, persistence.Absent)
	}
	defs, err := s.ListWorkflowDefs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range slices.Sorted(slices.Values(names)) {
		if n == "b" {
			want = append(want, "b z", "b v", "b a", "b m")
			continue
		}
		want = append(want, n+" v")
	}
	got := make([]string, len(defs))
	for i, d := range defs {
		got[i] = d.Name + " " + d.Version
		if d.Version != "v" {
			continue
		}
		rev := "1"
		if d.Name == "b" {
			rev = "2"
		}
		if diff := diffDef(d, newDef(d.Name, "v", rev)); diff != "" {
			t.Errorf("listed %s: %s", d.Name, diff)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ListWorkflowDefs = %q, want %q", got, want)
	}
}

// testInvalidWorkflowDefs: definitions and arguments that break the
// documented rules fail with ErrInvalid and store nothing.
func testInvalidWorkflowDefs(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	good := newDef("w", "v", "1")
	with := func(f func(d *persistence.WorkflowDef)) persistence.WorkflowDef {
		d := good
		f(&d)
		return d
	}
	for name, d := range map[string]persistence.WorkflowDef{
		"no name":             with(func(d *persistence.WorkflowDef) { d.Name = "" }),
		"name too long":       with(func(d *persistence.WorkflowDef) { d.Name = strings.Repeat("n", persistence.MaxWorkflowLen+1) }),
		"NUL in the name":     with(func(d *persistence.WorkflowDef) { d.Name = "a\x00b" }),
		"no version":          with(func(d *persistence.WorkflowDef) { d.Version = "" }),
		"version too long":    with(func(d *persistence.WorkflowDef) { d.Version = strings.Repeat("v", persistence.MaxVersionLen+1) }),
		"NUL in the version":  with(func(d *persistence.WorkflowDef) { d.Version = "v\x00" }),
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
	wantErr(t, "DeleteWorkflow if Absent", s.DeleteWorkflow(ctx, "w", "v", persistence.Absent), persistence.ErrInvalid)
	wantErr(t, "DeleteWorkflow of no name", s.DeleteWorkflow(ctx, "", "v", ""), persistence.ErrInvalid)
	wantErr(t, "DeleteWorkflow of every version if a hash", s.DeleteWorkflow(ctx, "w", "", good.Hash), persistence.ErrInvalid)
	wantErr(t, "DeleteWorkflow with a NUL in the version", s.DeleteWorkflow(ctx, "w", "v\x00", ""), persistence.ErrInvalid)
	wantErr(t, "GetWorkflow of no name", getErr(s, t, "", ""), persistence.ErrInvalid)
	wantErr(t, "GetWorkflow with a version too long", getErr(s, t, "w", strings.Repeat("v", persistence.MaxVersionLen+1)), persistence.ErrInvalid)
	wantErr(t, "SetCurrentWorkflow of no version", s.SetCurrentWorkflow(ctx, "w", ""), persistence.ErrInvalid)
	wantErr(t, "SetCurrentWorkflow of no name", s.SetCurrentWorkflow(ctx, "", "v"), persistence.ErrInvalid)
	if defs, err := s.ListWorkflowDefs(ctx); err != nil || len(defs) != 0 {
		t.Fatalf("ListWorkflowDefs after invalid puts = %v, %v; want none", defs, err)
	}
	// At the limits, it is stored.
	big := with(func(d *persistence.WorkflowDef) {
		d.Name = strings.Repeat("n", persistence.MaxWorkflowLen)
		d.Version = strings.Repeat("v", persistence.MaxVersionLen)
		d.Hash = strings.Repeat("h", persistence.MaxHashLen)
		d.Def = bytes.Repeat([]byte{0xff}, persistence.MaxDefLen)
		d.Source = strings.Repeat("s", persistence.MaxSourceLen)
		d.Owner = strings.Repeat("o", persistence.MaxOwnerLen)
	})
	putDef(t, s, big, persistence.Absent)
	checkDef(t, s, big)
}

// testConcurrentWorkflowPuts: of concurrent puts to one version under the
// same condition, exactly one wins and the others fail as if it had come
// first: ErrConflict for a compare-and-swap from the same hash, ErrExists
// for create-only puts. The stored version is the winner's.
func testConcurrentWorkflowPuts(t *testing.T, open OpenFunc) {
	const n = 16
	s := openStore(t, open)
	putDef(t, s, newDef("cas", "v", "base"), "")
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
					errs[i] = s.PutWorkflow(t.Context(), newDef(tc.name, "v", fmt.Sprint(i)), tc.ifHash)
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
			checkDef(t, s, newDef(tc.name, "v", fmt.Sprint(winner)))
		})
	}
}

// testConcurrentCurrent: concurrent current puts of different versions
// and moves of the current mark leave exactly one version current.
func testConcurrentCurrent(t *testing.T, open OpenFunc) {
	const n = 16
	s := openStore(t, open)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			if i%2 == 0 {
				if err := s.PutWorkflow(t.Context(), newDef("many", fmt.Sprint(i), fmt.Sprint(i)), persistence.Absent); err != nil {
					t.Errorf("put %d: %v", i, err)
				}
				return
			}
			// Odd ones move the mark to a version that may not be
			// stored yet: ErrNotFound is fine, anything else is not.
			err := s.SetCurrentWorkflow(t.Context(), "many", fmt.Sprint(i-1))
			if err != nil && !errors.Is(err, persistence.ErrNotFound) {
				t.Errorf("set current %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	got, err := s.GetWorkflow(t.Context(), "many", "")
	if err != nil {
		t.Fatalf("GetWorkflow of the current version after concurrent puts: %v", err)
	}
	checkCurrent(t, s, "many", got.Version)
}
