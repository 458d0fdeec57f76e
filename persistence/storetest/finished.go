package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// testFinishedBefore checks the retention scan: finished handlers by
// completion time, oldest first, none that still run, none deleted.
func testFinishedBefore(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	ids := newIDs(t, 6)
	// ids[0..3] finish at now-4m .. now-1m in reverse id order (so the
	// order is by time, not id); ids[4] runs; ids[5] finishes at now+1m.
	finish := map[string]time.Time{
		ids[3]: now.Add(-4 * time.Minute),
		ids[2]: now.Add(-3 * time.Minute),
		ids[1]: now.Add(-2 * time.Minute),
		ids[0]: now.Add(-1 * time.Minute),
		ids[5]: now.Add(time.Minute),
	}
	statuses := []persistence.Status{persistence.StatusCompleted, persistence.StatusFailed, persistence.StatusCancelled}
	for i, id := range ids {
		h := newHandler(id, "wf")
		if at, ok := finish[id]; ok {
			h.Status = statuses[i%len(statuses)]
			h.Residency = persistence.ResidencyReleased
			h.CompletedAt = at
		}
		write(t, s, persistence.Change{Handler: h, Snapshot: []byte("s"), Records: records(1)})
	}
	checkAfter := func(what string, before time.Time, after *persistence.Finished, limit int, want ...string) {
		t.Helper()
		got, err := s.FinishedBefore(t.Context(), before, after, limit)
		if err != nil {
			t.Fatalf("%s: FinishedBefore: %v", what, err)
		}
		var ids []string
		for _, f := range got {
			ids = append(ids, f.HandlerID)
			if at := finish[f.HandlerID]; !f.CompletedAt.Equal(at) {
				t.Fatalf("%s: %s completed at %v, want %v", what, f.HandlerID, f.CompletedAt, at)
			}
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("%s: FinishedBefore = %v, want %v", what, ids, want)
		}
	}
	check := func(what string, before time.Time, limit int, want ...string) {
		t.Helper()
		checkAfter(what, before, nil, limit, want...)
	}
	check("all due", now, 0, ids[3], ids[2], ids[1], ids[0])
	check("limit", now, 2, ids[3], ids[2])
	check("inclusive bound", now.Add(-3*time.Minute), 0, ids[3], ids[2])
	check("none due", now.Add(-time.Hour), 0)
	check("later", now.Add(time.Hour), 0, ids[3], ids[2], ids[1], ids[0], ids[5])
	checkAfter("after a position", now, &persistence.Finished{HandlerID: ids[2], CompletedAt: finish[ids[2]]}, 0, ids[1], ids[0])
	checkAfter("after a position no handler holds", now, &persistence.Finished{HandlerID: "zzz", CompletedAt: finish[ids[2]]}, 1, ids[1])

	// A running handler that finishes enters the index; a deleted one
	// leaves it.
	h := newHandler(ids[4], "wf")
	h.Status = persistence.StatusCompleted
	h.CompletedAt = now.Add(-5 * time.Minute)
	finish[ids[4]] = h.CompletedAt
	write(t, s, persistence.Change{Handler: h})
	write(t, s, persistence.Change{Handler: persistence.Handler{ID: ids[2]}, Delete: true})
	check("after finishing and deleting", now, 0, ids[4], ids[3], ids[1], ids[0])

	// Deleting every due handler in one write empties the scan.
	var del []persistence.Change
	for _, id := range []string{ids[4], ids[3], ids[1], ids[0]} {
		del = append(del, persistence.Change{Handler: persistence.Handler{ID: id}, Delete: true})
	}
	write(t, s, del...)
	check("after deleting in one write", now, 0)
	c, err := s.Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c.Handlers != 1 {
		t.Fatalf("Count().Handlers = %d after deleting 5 of 6, want 1", c.Handlers)
	}
}
