package postgres

import (
	"context"
	"fmt"
	"time"
)

// The counters Count reads are kept as deltas (migration 00005): every
// statement that changes handlers or tasks appends a row per counter it
// moves, so concurrent Writes never lock a counter row, and Count sums
// the rows per name. The store folds them back into one row per name
// every compactEvery, when there are more than compactAbove rows: a Count
// and the table stay small whatever the write rate.
const (
	compactEvery = time.Second
	compactAbove = 256
	// compactLock is the advisory lock (transaction-scoped, tried, never
	// waited for) that lets one store of those sharing a database fold
	// the rows at a time.
	compactLock = 0x77666463 // "wfdc"
)

// sqlCompactCounters replaces the deltas with their sums in one
// statement. Rows committed by concurrent Writes after the statement's
// snapshot are neither deleted nor summed: they stay for the next fold.
const sqlCompactCounters = `WITH gone AS (DELETE FROM wfd_counter_deltas RETURNING name, n)
INSERT INTO wfd_counter_deltas (name, n)
SELECT name, sum(n) FROM gone GROUP BY name HAVING sum(n) <> 0`

// compactCounters folds the counter deltas until ctx ends.
func (s *Store) compactCounters(ctx context.Context) {
	t := time.NewTicker(compactEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A failed fold is tried again at the next tick; Count is right
		// either way.
		_ = s.compactCountersOnce(ctx)
	}
}

// compactCountersOnce folds the deltas if there are many and no other
// store is folding them.
func (s *Store) compactCountersOnce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.writeTimeout)
	defer cancel()
	var many bool
	if err := s.pool.QueryRow(ctx,
		`SELECT count(*) > $1 FROM (SELECT 1 FROM wfd_counter_deltas LIMIT $1 + 1) r`, compactAbove).Scan(&many); err != nil || !many {
		return err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var locked bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, compactLock).Scan(&locked); err != nil || !locked {
		return err
	}
	if _, err := tx.Exec(ctx, sqlCompactCounters); err != nil {
		return fmt.Errorf("postgres: folding counters: %w", err)
	}
	return tx.Commit(ctx)
}
