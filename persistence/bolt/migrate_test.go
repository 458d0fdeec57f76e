package bolt_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// The handlers of testdata/schema2*.db (see testdata/README.md), newest
// first by creation time; ccc-tie and bbb-tie share a creation time.
var schema2Newest = []string{
	"aaa-last", "ccc-tie", "bbb-tie", "aaa-fourth", "mmm-third",
	"0195a1b2-0000-7000-8000-000000000001", "zzz-first",
}

// schema2Base is the fixture's reference time: handler i of schema2gen's
// fixture was created i seconds after it (ties aside), idle ones idle
// since 1, 10 and 20 minutes after it.
var schema2Base = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

// copyTestdata copies a testdata store to a temporary file (opening it
// migrates it in place) and returns its path.
func copyTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wfd.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// listIDs pages through q with the given page size and returns the ids,
// failing on any error.
func listIDs(t *testing.T, s persistence.Store, q persistence.Query, size int) []string {
	t.Helper()
	q.PageSize = size
	var got []string
	for range 100 {
		hs, next, err := s.ListHandlers(t.Context(), q)
		if err != nil {
			t.Fatalf("ListHandlers(%+v): %v", q, err)
		}
		got = append(got, ids(hs)...)
		if next == "" {
			return got
		}
		q.PageToken = next
	}
	t.Fatalf("ListHandlers(%+v): no last page", q)
	return nil
}

// checkSchema2Listings checks newest-first listings of the schema 2 fixture
// under every filter and several page sizes.
func checkSchema2Listings(t *testing.T, s persistence.Store) {
	t.Helper()
	running := []persistence.Status{persistence.StatusRunning}
	tests := []struct {
		query persistence.Query
		want  []string
	}{
		{persistence.Query{}, schema2Newest},
		{persistence.Query{Workflow: "alpha"}, []string{"aaa-last", "ccc-tie", "bbb-tie", "mmm-third", "zzz-first"}},
		{persistence.Query{Workflow: "beta"}, []string{"aaa-fourth", "0195a1b2-0000-7000-8000-000000000001"}},
		{persistence.Query{Statuses: running}, []string{"aaa-last", "ccc-tie", "mmm-third", "zzz-first"}},
		{persistence.Query{Statuses: []persistence.Status{persistence.StatusFailed, persistence.StatusCancelled}}, []string{"bbb-tie", "aaa-fourth"}},
		{persistence.Query{IdleOnly: true}, []string{"aaa-last", "mmm-third", "zzz-first"}},
		{persistence.Query{IdleFor: 15 * time.Minute, Now: schema2Base.Add(30 * time.Minute)}, []string{"mmm-third", "zzz-first"}},
		{persistence.Query{Residency: persistence.ResidencyReleased}, []string{"aaa-last", "aaa-fourth", "zzz-first"}},
		{persistence.Query{Workflow: "alpha", Statuses: running, IdleOnly: true, Residency: persistence.ResidencyReleased}, []string{"aaa-last", "zzz-first"}},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 2, 3, 100} {
			if got := listIDs(t, s, tt.query, size); !slices.Equal(got, tt.want) {
				t.Fatalf("ListHandlers(%+v), page size %d = %v, want %v", tt.query, size, got, tt.want)
			}
		}
	}
}

func schemaVersion(t *testing.T, path string) []byte {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var v []byte
	_ = db.View(func(tx *bbolt.Tx) error {
		v = bytes.Clone(tx.Bucket([]byte("meta")).Get([]byte("schema")))
		return nil
	})
	return v
}

// TestOpenSchema2 opens a store written by wfd with the schema 2 layout
// (handler indexes in id order): it migrates, lists by creation time with
// every filter, keeps records, tasks, waiters and counts, and its migrated
// entries are the ones later writes replace (no stale entries).
func TestOpenSchema2(t *testing.T) {
	path := copyTestdata(t, "schema2.db")
	if v := schemaVersion(t, path); !bytes.Equal(v, []byte{0, 0, 0, 2}) {
		t.Fatalf("testdata schema version = %v, want 2", v)
	}
	s := open(t, path)
	defer func() { _ = s.Close() }()
	checkSchema2Listings(t, s)

	c, err := s.Count(t.Context())
	if err != nil || c.Handlers != 7 || c.Idle != 3 || c.ByStatus[persistence.StatusRunning] != 4 ||
		c.ByResidency[persistence.ResidencyReleased] != 3 || c.Tasks != 3 {
		t.Fatalf("Count = %+v, %v", c, err)
	}
	for _, id := range schema2Newest {
		h, err := s.GetHandler(t.Context(), id)
		if err != nil || h.LastSeq != 2 {
			t.Fatalf("GetHandler(%s) = LastSeq %d, %v", id, h.LastSeq, err)
		}
		rs, err := s.ReadRecords(t.Context(), id, 0, 0)
		if err != nil || len(rs) != 2 || string(rs[1].Data) != "updated "+id {
			t.Fatalf("ReadRecords(%s) = %d records, %v", id, len(rs), err)
		}
	}
	if w, err := s.WaitingFor(t.Context(), "answer/mmm-third", 0); err != nil || !slices.Equal(w, []string{"mmm-third"}) {
		t.Fatalf("WaitingFor = %v, %v", w, err)
	}
	if ts, _, err := s.ListTasks(t.Context(), persistence.TaskQuery{}); err != nil || len(ts) != 3 {
		t.Fatalf("ListTasks = %v, %v", taskIDs(ts), err)
	}

	// A handler created now lists first, whatever its id.
	fresh := persistence.Handler{ID: "000-fresh", Workflow: "alpha", Status: persistence.StatusRunning,
		Residency: persistence.ResidencyActive, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := s.Write(t.Context(), persistence.Change{Handler: fresh, Create: true}); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s, persistence.Query{}, 3); !slices.Equal(got, append([]string{fresh.ID}, schema2Newest...)) {
		t.Fatalf("ListHandlers after a write = %v", got)
	}
	if err := s.Write(t.Context(), persistence.Change{Handler: fresh, Delete: true}); err != nil {
		t.Fatal(err)
	}

	// Reopening (already migrated) lists the same.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v := schemaVersion(t, path); !bytes.Equal(v, []byte{0, 0, 0, 9}) {
		t.Fatalf("schema version after migration = %v, want 7", v)
	}
	s = open(t, path)
	defer func() { _ = s.Close() }()
	checkSchema2Listings(t, s)

	// Moving every running handler out of every filtered set, and
	// deleting the finished ones (which take no other change), leaves no
	// migrated entry behind: each was where the current code looks for it.
	var moved []string // newest first, as schema2Newest
	for _, id := range schema2Newest {
		h, err := s.GetHandler(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		c := persistence.Change{Handler: h, Delete: h.Status.Terminal()}
		if !c.Delete {
			moved = append(moved, id)
			h.Status, h.Residency, h.Owner, h.IdleSince, h.Waiters = persistence.StatusCompleted, persistence.ResidencyActive, "r", time.Time{}, nil
			h.Workflow = "gamma"
			c.Handler = h
		}
		if err := s.Write(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []persistence.Query{
		{Workflow: "alpha"}, {Workflow: "beta"}, {Statuses: []persistence.Status{persistence.StatusRunning, persistence.StatusFailed, persistence.StatusCancelled}},
		{IdleOnly: true}, {Residency: persistence.ResidencyReleased},
	} {
		if got := listIDs(t, s, q, 0); len(got) != 0 {
			t.Fatalf("ListHandlers(%+v) after moving every handler = %v: stale entries", q, got)
		}
	}
	if got := listIDs(t, s, persistence.Query{Workflow: "gamma", Statuses: []persistence.Status{persistence.StatusCompleted}}, 2); !slices.Equal(got, moved) {
		t.Fatalf("ListHandlers(gamma, completed) = %v, want %v", got, moved)
	}
	if got := listIDs(t, s, persistence.Query{}, 2); !slices.Equal(got, moved) {
		t.Fatalf("ListHandlers() after deleting the finished ones = %v, want %v", got, moved)
	}
	n := int64(len(moved))
	c, err = s.Count(t.Context())
	if err != nil || n < 2 || c.Handlers != n || c.Idle != 0 || c.ByStatus[persistence.StatusCompleted] != n || c.ByResidency[persistence.ResidencyActive] != n {
		t.Fatalf("Count after moving every handler = %+v, %v", c, err)
	}
}

// TestOpenSchema2Corrupt opens a schema 2 store holding a handler whose
// metadata cannot be decoded: the migration keeps its entries (so listing
// names it, as before, and counts stay right), and overwriting it repairs
// it.
func TestOpenSchema2Corrupt(t *testing.T) {
	s := open(t, copyTestdata(t, "schema2-corrupt.db"))
	defer func() { _ = s.Close() }()
	for _, q := range []persistence.Query{{}, {Workflow: "alpha"}, {Statuses: []persistence.Status{persistence.StatusRunning}}} {
		hs, _, err := s.ListHandlers(t.Context(), q)
		if !errors.Is(err, persistence.ErrCorrupt) || slices.Contains(ids(hs), "kkk-corrupt") {
			t.Fatalf("ListHandlers(%+v) = %v, %v; want the healthy handlers and ErrCorrupt", q, ids(hs), err)
		}
	}
	if c, err := s.Count(t.Context()); err != nil || c.Handlers != 8 || c.ByStatus[persistence.StatusRunning] != 5 {
		t.Fatalf("Count = %+v, %v", c, err)
	}
	fixed := persistence.Handler{ID: "kkk-corrupt", Workflow: "beta", Status: persistence.StatusCompleted,
		Residency: persistence.ResidencyActive, CreatedAt: schema2Base.Add(6 * time.Second), UpdatedAt: time.Now()}
	if err := s.Write(t.Context(), persistence.Change{Handler: fixed}); err != nil {
		t.Fatalf("overwriting the corrupt handler: %v", err)
	}
	checkSchema2Listings(t, onlyFixture{s})
	if got := listIDs(t, s, persistence.Query{}, 2); !slices.Equal(got, append([]string{"kkk-corrupt"}, schema2Newest...)) {
		t.Fatalf("ListHandlers after repair = %v", got)
	}
	if c, err := s.Count(t.Context()); err != nil || c.Handlers != 8 || c.ByStatus[persistence.StatusRunning] != 4 || c.ByStatus[persistence.StatusCompleted] != 2 {
		t.Fatalf("Count after repair = %+v, %v", c, err)
	}
}

// onlyFixture hides the repaired handler of schema2-corrupt.db from
// listings, so checkSchema2Listings applies.
type onlyFixture struct{ *bolt.Store }

func (s onlyFixture) ListHandlers(ctx context.Context, q persistence.Query) ([]persistence.Handler, string, error) {
	hs, next, err := s.Store.ListHandlers(ctx, q)
	return slices.DeleteFunc(hs, func(h persistence.Handler) bool { return h.ID == "kkk-corrupt" }), next, err
}

// TestMigrateSchema1 opens a file of layout version 1 (the schema 2
// fixture without the task and published buckets, which version 2 added):
// it is migrated in place to the current version and keeps its handlers.
func TestMigrateSchema1(t *testing.T) {
	path := copyTestdata(t, "schema2.db")
	added := []string{"tasks", "idx_task_status", "idx_task_assignee", "idx_task_workflow", "idx_task_handler",
		"published", "idx_published_id", "idx_published_key"}
	rawUpdate(t, path, func(tx *bbolt.Tx) error {
		for _, name := range added {
			if err := tx.DeleteBucket([]byte(name)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		// Version 1 had no task counters either.
		meta := tx.Bucket([]byte("meta"))
		for _, st := range persistence.TaskStatuses() {
			if err := meta.Delete([]byte("count/task_status/" + string([]byte{byte(st)}))); err != nil {
				return err
			}
		}
		return meta.Put([]byte("schema"), []byte{0, 0, 0, 1})
	})

	s := open(t, path)
	checkSchema2Listings(t, s)
	h, err := s.GetHandler(t.Context(), "mmm-third")
	if err != nil {
		t.Fatalf("GetHandler after migration: %v", err)
	}
	task := testTask(h, "w2", "alice", time.Now())
	if err := s.Write(t.Context(), persistence.Change{Handler: h, Tasks: []persistence.Task{task}}); err != nil {
		t.Fatalf("writing a task after migration: %v", err)
	}
	if p, err := s.Publish(t.Context(), persistence.Published{ID: "e", Key: "k", At: time.Now()}); err != nil || p.Seq != 1 {
		t.Fatalf("first Publish after migration = %+v, %v", p, err)
	}
	c, err := s.Count(t.Context())
	if err != nil || c.Handlers != 7 || c.Tasks != 1 {
		t.Fatalf("Count after migration = %+v, %v", c, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v := schemaVersion(t, path); !bytes.Equal(v, []byte{0, 0, 0, 9}) {
		t.Fatalf("schema version after migration = %v, want 7", v)
	}
}

// TestSchema2PageToken: a ListHandlers token issued before the migration
// (version 1, holding a handler id) is refused as invalid, so a client
// lists again from the first page instead of getting a wrong page.
func TestSchema2PageToken(t *testing.T) {
	s := open(t, copyTestdata(t, "schema2.db"))
	defer func() { _ = s.Close() }()
	old := append([]byte{1}, "mmm-third"...)
	old = binary.BigEndian.AppendUint64(old, 0x1234)
	_, _, err := s.ListHandlers(t.Context(), persistence.Query{PageToken: base64.RawURLEncoding.EncodeToString(old)})
	if !errors.Is(err, persistence.ErrInvalid) {
		t.Fatalf("ListHandlers with a version 1 token = %v, want ErrInvalid", err)
	}
}
