package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestCountersConcurrentWriters: Writes of two stores sharing a database
// (replicas), each inserting a handler and updating another in one
// statement, never deadlock on the counters (with one upserted row per
// counter, an insert trigger and an update trigger locked them in
// different orders), and Count is exact before and after the deltas are
// folded.
func TestCountersConcurrentWriters(t *testing.T) {
	url := pgtest.NewDatabase(t)
	stores := []*postgres.Store{openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})}
	// The test folds the deltas itself: a background fold during the
	// writes (they take over a second on a busy machine) would leave too
	// few rows to fold.
	for _, s := range stores {
		postgres.StopCompacting(s)
	}
	const writers, rounds = 4, 40
	type final struct{ released, idle int }
	results := make(chan final, len(stores)*writers)
	var wg sync.WaitGroup
	for si, s := range stores {
		for w := range writers {
			wg.Go(func() {
				var f final
				var prev persistence.Handler
				for i := range rounds {
					h := testHandler(fmt.Sprintf("s%d-w%d-%03d", si, w, i))
					cs := []persistence.Change{{Handler: h}}
					if i > 0 {
						// The previous handler flips to resident and busy.
						prev.Residency, prev.IdleSince, prev.UpdatedAt = persistence.ResidencyActive, time.Time{}, prev.UpdatedAt.Add(time.Second)
						cs = append(cs, persistence.Change{Handler: prev})
					}
					if err := s.Write(t.Context(), cs...); err != nil {
						t.Errorf("store %d writer %d round %d: %v", si, w, i, err)
						return
					}
					prev = h
				}
				f.released, f.idle = 1, 1 // the last one written
				results <- f
			})
		}
	}
	wg.Wait()
	close(results)
	if t.Failed() {
		return
	}
	total := len(stores) * writers * rounds
	var released, idle int
	for f := range results {
		released += f.released
		idle += f.idle
	}
	check := func(when string) {
		t.Helper()
		c, err := stores[0].Count(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if c.Handlers != int64(total) || c.Idle != int64(idle) ||
			c.ByResidency[persistence.ResidencyReleased] != int64(released) ||
			c.ByResidency[persistence.ResidencyActive] != int64(total-released) ||
			c.ByStatus[persistence.StatusRunning] != int64(total) {
			t.Fatalf("%s: Count = %+v; want %d handlers, %d idle, %d released, %d active, all running",
				when, c, total, idle, released, total-released)
		}
	}
	check("before folding")
	before, err := postgres.CounterRows(t.Context(), stores[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := postgres.CompactCounters(t.Context(), stores[1]); err != nil {
		t.Fatal(err)
	}
	after, err := postgres.CounterRows(t.Context(), stores[0])
	if err != nil {
		t.Fatal(err)
	}
	if before <= 256 || after >= 16 {
		t.Fatalf("counter rows %d before folding, %d after; want over 256, then one per counter", before, after)
	}
	check("after folding")
}
