package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
)

// DueTimers returns timers due at or before before, earliest first, from
// wfd_timers_due.
func (s *Store) DueTimers(ctx context.Context, before time.Time, limit int) ([]persistence.Timer, error) {
	return queryTimed(ctx, s, "due timers", limit, `SELECT due_at, due_ns, handler_id, waiter_id FROM wfd_timers
		WHERE (due_at, due_ns) <= ($1, $2) ORDER BY due_at, due_ns, handler_id, waiter_id LIMIT $3`,
		[]any{before, nsOf(before)},
		func(t *persistence.Timer) (*time.Time, []any) { return &t.Due, []any{&t.HandlerID, &t.WaiterID} })
}

// WaitingFor returns the ids of handlers with a waiter keyed key, from
// wfd_wait_keys_key.
func (s *Store) WaitingFor(ctx context.Context, key string, limit int) ([]string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT handler_id FROM wfd_wait_keys WHERE key = $1 ORDER BY handler_id LIMIT $2`, key, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: waiting for %q: %w", key, s.classify(ctx, err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: waiting for %q: %w", key, s.classify(ctx, err))
	}
	return ids, nil
}

// LongestIdle returns idle handlers idle since at or before before,
// longest idle first, from wfd_handlers_idle.
func (s *Store) LongestIdle(ctx context.Context, before time.Time, limit int) ([]persistence.Idle, error) {
	return queryTimed(ctx, s, "longest idle", limit, `SELECT idle_since, idle_ns, id FROM wfd_handlers
		WHERE idle_since IS NOT NULL AND (idle_since, idle_ns) <= ($1, $2)
		ORDER BY idle_since, idle_ns, id LIMIT $3`,
		[]any{before, nsOf(before)},
		func(i *persistence.Idle) (*time.Time, []any) { return &i.Since, []any{&i.HandlerID} })
}

// FinishedBefore returns finished handlers completed at or before before,
// oldest first, after the position after, from wfd_handlers_finished.
func (s *Store) FinishedBefore(ctx context.Context, before time.Time, after *persistence.Finished, limit int) ([]persistence.Finished, error) {
	// Without a position, start before the earliest representable time.
	from := persistence.Finished{CompletedAt: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)}
	if after != nil {
		from = *after
	}
	return queryTimed(ctx, s, "finished before", limit, `SELECT completed_at, completed_ns, id FROM wfd_handlers
		WHERE completed_at IS NOT NULL AND (completed_at, completed_ns) <= ($1, $2)
		AND (completed_at, completed_ns, id) > ($3, $4, $5)
		ORDER BY completed_at, completed_ns, id LIMIT $6`,
		[]any{before, nsOf(before), from.CompletedAt, nsOf(from.CompletedAt), from.HandlerID},
		func(f *persistence.Finished) (*time.Time, []any) { return &f.CompletedAt, []any{&f.HandlerID} })
}

// queryTimed runs the query of a scan (what, for errors) in time order:
// args, then limit (DefaultScanLimit if not positive) as the last
// parameter. Each row is a time, as its two columns, then the columns
// fields places in the row's item with the item's time.
func queryTimed[T any](ctx context.Context, s *Store, what string, limit int, sql string, args []any,
	fields func(*T) (*time.Time, []any)) ([]T, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	rows, err := s.pool.Query(ctx, sql, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, s.classify(ctx, err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) {
		var (
			item T
			at   time.Time
			ns   int16
		)
		t, rest := fields(&item)
		err := r.Scan(append([]any{&at, &ns}, rest...)...)
		*t = fromParts(at, ns)
		return item, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, s.classify(ctx, err))
	}
	return out, nil
}
