package bolt_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
	"github.com/wfd-dev/wfd/persistence/storetest"
)

// TestConformance runs the backend-neutral suite on real files, with fsync
// on (what the suite calls durable is durable), with each commit strategy.
func TestConformance(t *testing.T) {
	for _, mode := range storeModes {
		t.Run(mode.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) persistence.Store {
				s, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), mode.opts)
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				return s
			})
		})
	}
}

// TestConformanceReplicas runs the suites of what the stores of several
// replicas share: skipped, as one process's store implements none of it.
func TestConformanceReplicas(t *testing.T) {
	storetest.RunReplicas(t, func(t *testing.T) storetest.OpenFunc {
		path := filepath.Join(t.TempDir(), "wfd.db")
		return func(t *testing.T) persistence.Store { return open(t, path) }
	})
}

// TestPageTokensUnchanged: the page tokens of fixed listings are those the
// store issued before its listings shared their token code with
// PostgreSQL's (persistence/internal/pagetoken): clients keep them.
func TestPageTokensUnchanged(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "wfd.db"))
	t.Cleanup(func() { _ = s.Close() })
	want := []string{
		"AoAAAABnwtqjB1vNFWgzSB0dOweCjZo", "AoAAAABnwtqiB1vNFWgy1mUa6vcZ6hM", "AoAAAABnwtqkB1vNFWg0KdYSP5ZuR6w",
		"AYAAAABnwtqjB1vNFWgzOncw5j7EiVkzgw", "AYAAAABnwtqkB1vNFWg0Ond2uaeW05n5kw", "AYAAAABnwtqjB1vNFWgzOnddQZBjo3gbYw",
		"A4AAAABnwtqkB1vNFQAAAAAAAAAJIteAnMVIuUk", "A4AAAABnwtqkB1vNFQAAAAAAAAAKXlUt4btn2-k",
	}
	if got := storetest.PageTokens(t, s); !slices.Equal(got, want) {
		t.Fatalf("page tokens:\n got %q\nwant %q", got, want)
	}
}

func open(t *testing.T, path string) *bolt.Store {
	t.Helper()
	s, err := bolt.Open(path, bolt.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// testIDs returns fixed UUIDv7 strings in creation order.
func testIDs() [3]string {
	return [3]string{
		"019a0000-0000-7000-8000-000000000001",
		"019a0000-0000-7000-8000-000000000002",
		"019a0000-0000-7000-8000-000000000003",
	}
}

func testHandler(id string) persistence.Handler {
	now := time.Date(2025, 6, 1, 12, 0, 0, 123, time.UTC)
	return persistence.Handler{
		ID: id, Workflow: "wf", Status: persistence.StatusRunning, Residency: persistence.ResidencyReleased,
		CreatedAt: now, UpdatedAt: now, IdleSince: now,
		Waiters: []persistence.Waiter{{ID: "w", Key: "answer", Deadline: now.Add(time.Hour), Match: []byte("m")}},
		Result:  []byte("r"),
	}
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "wfd.db") // Open creates the directories
	s := open(t, path)
	var changes []persistence.Change
	for i, id := range testIDs() {
		changes = append(changes, persistence.Change{
			Handler:  testHandler(id),
			Snapshot: []byte("snap " + id),
			Records:  []persistence.Record{{Seq: 1, Data: []byte("a")}, {Seq: uint64(2 + i), Data: []byte("b")}},
			Create:   true,
		})
	}
	if err := s.Write(t.Context(), changes...); err != nil {
		t.Fatal(err)
	}
	before, err := s.Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	defer func() { _ = s.Close() }()
	for i, id := range testIDs() {
		h, err := s.GetHandler(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := testHandler(id)
		if h.Workflow != want.Workflow || !h.IdleSince.Equal(want.IdleSince) || h.LastSeq != uint64(2+i) ||
			len(h.Waiters) != 1 || !h.Waiters[0].Deadline.Equal(want.Waiters[0].Deadline) {
			t.Fatalf("after reopen: %+v", h)
		}
		snap, err := s.LoadSnapshot(t.Context(), id)
		if err != nil || string(snap) != "snap "+id {
			t.Fatalf("snapshot after reopen: %q, %v", snap, err)
		}
		recs, err := s.ReadRecords(t.Context(), id, 1, 0)
		if err != nil || len(recs) != 1 || recs[0].Seq != uint64(2+i) {
			t.Fatalf("records after reopen: %v, %v", recs, err)
		}
	}
	hs, _, err := s.ListHandlers(t.Context(), persistence.Query{IdleOnly: true, Residency: persistence.ResidencyReleased})
	if err != nil || !slices.Equal(ids(hs), []string{testIDs()[2], testIDs()[1], testIDs()[0]}) {
		t.Fatalf("ListHandlers after reopen: %v, %v", ids(hs), err)
	}
	timers, err := s.DueTimers(t.Context(), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), 0)
	if err != nil || len(timers) != 3 {
		t.Fatalf("DueTimers after reopen: %v, %v", timers, err)
	}
	waiting, err := s.WaitingFor(t.Context(), "answer", 0)
	if err != nil || len(waiting) != 3 {
		t.Fatalf("WaitingFor after reopen: %v, %v", waiting, err)
	}
	after, err := s.Count(t.Context())
	if err != nil || after.Handlers != before.Handlers || after.Idle != before.Idle {
		t.Fatalf("Count after reopen = %+v, %v; before %+v", after, err, before)
	}
}

func ids(hs []persistence.Handler) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

// TestCorruptMetadata damages one handler's metadata with raw bbolt: that
// handler reports ErrCorrupt, the others keep working, and writing or
// deleting the damaged handler repairs its index entries and counters.
func TestCorruptMetadata(t *testing.T) {
	values := map[string][]byte{
		"garbage":         []byte("\xff\xfe not protobuf"),
		"empty":           {},
		"unknown version": encodeWithVersion(t, 99),
		"other handler":   encode(t, testHandler(testIDs()[0])),
		"invalid status":  encode(t, func() persistence.Handler { h := testHandler(testIDs()[1]); h.Status = 42; return h }()),
	}
	for name, value := range values {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wfd.db")
			s := open(t, path)
			var changes []persistence.Change
			for _, id := range testIDs() {
				changes = append(changes, persistence.Change{Handler: testHandler(id), Snapshot: []byte("s"), Records: []persistence.Record{{Seq: 7}}})
			}
			if err := s.Write(t.Context(), changes...); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			bad := testIDs()[1]
			db, err := bbolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(func(tx *bbolt.Tx) error {
				return tx.Bucket([]byte("handlers")).Put([]byte(bad), value)
			}); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			s = open(t, path)
			defer func() { _ = s.Close() }()
			_, err = s.GetHandler(t.Context(), bad)
			if !errors.Is(err, persistence.ErrCorrupt) {
				t.Fatalf("GetHandler(corrupt) = %v, want ErrCorrupt", err)
			}
			for _, id := range []string{testIDs()[0], testIDs()[2]} {
				if _, err := s.GetHandler(t.Context(), id); err != nil {
					t.Fatalf("GetHandler(%s) next to a corrupt handler: %v", id, err)
				}
			}
			// Listing returns the healthy handlers and names the corrupt one.
			hs, _, err := s.ListHandlers(t.Context(), persistence.Query{})
			if !errors.Is(err, persistence.ErrCorrupt) || !slices.Equal(ids(hs), []string{testIDs()[2], testIDs()[0]}) {
				t.Fatalf("ListHandlers = %v, %v; want the two healthy handlers and ErrCorrupt", ids(hs), err)
			}
			// A conditional write cannot check the owner of a corrupt handler.
			owner := ""
			err = s.Write(t.Context(), persistence.Change{Handler: testHandler(bad), IfOwner: &owner})
			if !errors.Is(err, persistence.ErrCorrupt) {
				t.Fatalf("conditional Write over corrupt metadata = %v, want ErrCorrupt", err)
			}

			// Overwriting repairs it: its old index entries are found
			// without the metadata and replaced, records continue.
			fixed := testHandler(bad)
			fixed.Workflow, fixed.Status, fixed.IdleSince, fixed.Waiters = "fixed", persistence.StatusCompleted, time.Time{}, nil
			err = s.Write(t.Context(), persistence.Change{Handler: fixed, Records: []persistence.Record{{Seq: 7}}})
			if !errors.Is(err, persistence.ErrConflict) {
				t.Fatalf("appending an old seq to a corrupt handler = %v, want ErrConflict", err)
			}
			if err := s.Write(t.Context(), persistence.Change{Handler: fixed, Records: []persistence.Record{{Seq: 8}}}); err != nil {
				t.Fatalf("overwriting corrupt metadata: %v", err)
			}
			for _, q := range []persistence.Query{
				{Workflow: "wf"}, {IdleOnly: true}, {Statuses: []persistence.Status{persistence.StatusRunning}},
			} {
				hs, _, err := s.ListHandlers(t.Context(), q)
				if err != nil || slices.Contains(ids(hs), bad) {
					t.Fatalf("ListHandlers(%+v) after repair = %v, %v: stale entry", q, ids(hs), err)
				}
			}
			if w, err := s.WaitingFor(t.Context(), "answer", 0); err != nil || slices.Contains(w, bad) {
				t.Fatalf("WaitingFor after repair = %v, %v: stale entry", w, err)
			}
			c, err := s.Count(t.Context())
			if err != nil || c.Handlers != 3 || c.Idle != 2 || c.ByStatus[persistence.StatusCompleted] != 1 || c.ByStatus[persistence.StatusRunning] != 2 {
				t.Fatalf("Count after repair = %+v, %v", c, err)
			}
		})
	}
}

func TestDeleteCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	h := testHandler(testIDs()[0])
	if err := s.Write(t.Context(), persistence.Change{Handler: h, Records: []persistence.Record{{Seq: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte("handlers")).Put([]byte(h.ID), []byte("junk"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	defer func() { _ = s.Close() }()
	if err := s.Write(t.Context(), persistence.Change{Handler: persistence.Handler{ID: h.ID}, Delete: true}); err != nil {
		t.Fatalf("Delete of a corrupt handler: %v", err)
	}
	c, err := s.Count(t.Context())
	if err != nil || c.Handlers != 0 || c.Idle != 0 || c.ByStatus[persistence.StatusRunning] != 0 || c.ByResidency[persistence.ResidencyReleased] != 0 {
		t.Fatalf("Count after deleting = %+v, %v", c, err)
	}
	if timers, err := s.DueTimers(t.Context(), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), 0); err != nil || len(timers) != 0 {
		t.Fatalf("DueTimers after deleting = %v, %v", timers, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	t.Run("not a bolt file", func(t *testing.T) {
		path := filepath.Join(dir, "junk.db")
		if err := os.WriteFile(path, bytes.Repeat([]byte("junk"), 4096), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := bolt.Open(path, bolt.Options{})
		if !errors.Is(err, persistence.ErrCorrupt) {
			t.Fatalf("Open = %v, want ErrCorrupt", err)
		}
	})
	t.Run("locked by another store", func(t *testing.T) {
		path := filepath.Join(dir, "locked.db")
		s := open(t, path)
		defer func() { _ = s.Close() }()
		_, err := bolt.Open(path, bolt.Options{Timeout: 50 * time.Millisecond})
		if !errors.Is(err, persistence.ErrUnavailable) {
			t.Fatalf("second Open = %v, want ErrUnavailable", err)
		}
	})
	t.Run("newer schema", func(t *testing.T) {
		path := filepath.Join(dir, "newer.db")
		if err := open(t, path).Close(); err != nil {
			t.Fatal(err)
		}
		db, err := bbolt.Open(path, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte{0, 0, 1, 0})
		}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		_, err = bolt.Open(path, bolt.Options{})
		if !errors.Is(err, persistence.ErrCorrupt) {
			t.Fatalf("Open = %v, want ErrCorrupt", err)
		}
	})
	t.Run("empty path", func(t *testing.T) {
		_, err := bolt.Open("", bolt.Options{})
		if !errors.Is(err, persistence.ErrInvalid) {
			t.Fatalf("Open = %v, want ErrInvalid", err)
		}
	})
}

func encode(t testing.TB, h persistence.Handler) []byte {
	t.Helper()
	b, err := codec.EncodeHandler(&h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encodeWithVersion encodes a valid handler and overwrites its version
// field (field 1, varint: the first two bytes of a deterministic encoding).
func encodeWithVersion(t testing.TB, v byte) []byte {
	t.Helper()
	b := encode(t, testHandler(testIDs()[1]))
	if b[0] != 0x08 {
		t.Fatalf("encoding does not start with the version field: % x", b[:4])
	}
	b[1] = v
	return b
}

// FuzzDecodeHandler feeds arbitrary bytes to the metadata decoder: it must
// never panic, must classify every failure as ErrCorrupt, and whatever it
// accepts must be a valid handler that survives a round trip unchanged.
func FuzzDecodeHandler(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("junk"))
	f.Add(encode(f, testHandler(testIDs()[0])))
	f.Add(encode(f, persistence.Handler{ID: "x", Workflow: "w", Status: persistence.StatusFailed, Residency: persistence.ResidencyActive}))
	f.Add(encodeWithVersion(f, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := codec.DecodeHandler(data)
		if err != nil {
			if !errors.Is(err, persistence.ErrCorrupt) {
				t.Fatalf("DecodeHandler error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if err := h.Validate(); err != nil {
			t.Fatalf("DecodeHandler accepted an invalid handler: %v", err)
		}
		again, err := codec.DecodeHandler(encode(t, h))
		if err != nil {
			t.Fatalf("re-decoding an accepted handler: %v", err)
		}
		if d := diff(again, h); d != "" {
			t.Fatalf("round trip changed the handler: %s", d)
		}
	})
}

func diff(a, b persistence.Handler) string {
	switch {
	case a.ID != b.ID || a.Workflow != b.Workflow || a.Status != b.Status || a.Residency != b.Residency ||
		a.Owner != b.Owner || a.Error != b.Error || a.Parent != b.Parent || a.LastSeq != b.LastSeq:
		return "scalar fields differ"
	case !a.CreatedAt.Equal(b.CreatedAt) || !a.UpdatedAt.Equal(b.UpdatedAt) ||
		!a.CompletedAt.Equal(b.CompletedAt) || !a.IdleSince.Equal(b.IdleSince):
		return "times differ"
	case !bytes.Equal(a.Result, b.Result):
		return "results differ"
	case len(a.Waiters) != len(b.Waiters):
		return "waiter counts differ"
	}
	for i := range a.Waiters {
		x, y := a.Waiters[i], b.Waiters[i]
		if x.ID != y.ID || x.Step != y.Step || x.EventType != y.EventType || x.Key != y.Key ||
			!bytes.Equal(x.Match, y.Match) || !x.Deadline.Equal(y.Deadline) {
			return "waiters differ"
		}
	}
	return ""
}

// TestFencedChangeRefused: one process has no leases, so a fenced change
// (persistence.Change.Fence) is refused rather than written unchecked,
// and nothing of its Write is applied.
func TestFencedChangeRefused(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "wfd.db"))
	defer func() { _ = s.Close() }()
	id := testIDs()
	err := s.Write(t.Context(),
		persistence.Change{Handler: testHandler(id[0])},
		persistence.Change{Handler: testHandler(id[1]), Fence: persistence.Fence{Replica: "A", Token: 1}})
	if !errors.Is(err, persistence.ErrInvalid) {
		t.Fatalf("fenced Write: %v, want ErrInvalid", err)
	}
	if _, err := s.GetHandler(t.Context(), id[0]); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("the refused Write's other change: %v, want ErrNotFound", err)
	}
}
