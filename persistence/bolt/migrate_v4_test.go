package bolt_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// TestOpenSchema3 opens a store written by wfd at commit fe775f8
// (testdata/schema3-notes.db, see testdata/README.md): two released
// handlers whose outside event type and run deadline were stored as the
// pseudo-waiters "~external/note" and "~timeout". Opening migrates them to
// fields of the metadata and moves the deadline's timer entry to where the
// current code looks for it.
func TestOpenSchema3(t *testing.T) {
	path := copyTestdata(t, "schema3-notes.db")
	if v := schemaVersion(t, path); !bytes.Equal(v, []byte{0, 0, 0, 3}) {
		t.Fatalf("schema version of the fixture = %v, want 3", v)
	}
	s := open(t, path)
	defer func() { _ = s.Close() }()
	ids := []string{"golden-notes", "golden-notes-late"}

	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	timers, err := s.DueTimers(t.Context(), far, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(timers) != 2 {
		t.Fatalf("DueTimers = %v, want the two handlers' deadlines", timers)
	}
	for _, id := range ids {
		h, snap, err := s.LoadHandler(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap) == 0 {
			t.Errorf("%s: no snapshot", id)
		}
		if len(h.Waiters) != 0 || !slices.Equal(h.External, []string{"note"}) || h.Deadline.IsZero() ||
			h.IdleSince.IsZero() || h.Residency != persistence.ResidencyReleased {
			t.Fatalf("%s after migration: waiters %v, external %v, deadline %v, idle since %v, residency %v",
				id, h.Waiters, h.External, h.Deadline, h.IdleSince, h.Residency)
		}
		// The run deadline is 24 hours after creation (goldenwf.NotesTimeout).
		if got := h.Deadline.Sub(h.CreatedAt); got < 24*time.Hour || got > 24*time.Hour+time.Minute {
			t.Errorf("%s: deadline %v is %v after creation, want 24h", id, h.Deadline, got)
		}
		if !slices.ContainsFunc(timers, func(tm persistence.Timer) bool {
			return tm.HandlerID == id && tm.WaiterID == "" && tm.Due.Equal(h.Deadline)
		}) {
			t.Errorf("%s: no timer for its deadline %v in %v", id, h.Deadline, timers)
		}
	}

	// Ending the handlers leaves no timer behind: each migrated entry was
	// where the current code looks for it.
	for _, id := range ids {
		h, err := s.GetHandler(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		h.Status, h.CompletedAt, h.Deadline, h.External, h.IdleSince = persistence.StatusCancelled, h.UpdatedAt, time.Time{}, nil, time.Time{}
		if err := s.Write(t.Context(), persistence.Change{Handler: h}); err != nil {
			t.Fatal(err)
		}
	}
	if timers, err := s.DueTimers(t.Context(), far, 0); err != nil || len(timers) != 0 {
		t.Fatalf("DueTimers after the handlers ended = %v, %v; want none", timers, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v := schemaVersion(t, path); !bytes.Equal(v, []byte{0, 0, 0, 9}) {
		t.Fatalf("schema version after migration = %v, want 7", v)
	}
}
