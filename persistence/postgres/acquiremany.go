package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
)

// sqlAcquireMany is sqlAcquire of many handlers in one statement, so one
// commit (and WAL flush) for all of them: the leases are taken in id
// order, as Renew and Write lock them, and each conflicting row is
// checked again against the row as committed, as in sqlAcquire.
const sqlAcquireMany = `INSERT INTO wfd_leases AS l (handler_id, owner, token, acquired_at, expires_at)
	SELECT h, $2, nextval('wfd_lease_tokens'), now(), now() + $3::bigint * interval '1 microsecond'
	FROM unnest($1::text[]) AS h ORDER BY h
	ON CONFLICT (handler_id) DO UPDATE
	SET owner = excluded.owner, token = ` + sqlNextToken + `, acquired_at = now(), expires_at = excluded.expires_at
	WHERE l.owner = '' OR l.owner = excluded.owner OR l.expires_at <= now()
	RETURNING handler_id, owner, token, acquired_at, expires_at, true`

// AcquireMany implements persistence.Leaser.
func (s *Store) AcquireMany(ctx context.Context, handlers []string, replica string, ttl time.Duration) ([]persistence.Lease, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if replica == "" || ttl <= 0 || slices.Contains(handlers, "") {
		return nil, fmt.Errorf("%w: postgres: acquire: a lease needs a handler, a replica and a positive ttl", persistence.ErrInvalid)
	}
	// One row per handler: an upsert may not touch a row twice.
	ids := slices.Compact(slices.Sorted(slices.Values(handlers)))
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, sqlAcquireMany, ids, replica, ttl.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("postgres: acquire %d handlers: %w", len(ids), s.classify(ctx, err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (persistence.Lease, error) { return scanLease(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: acquire %d handlers: %w", len(ids), s.classify(ctx, err))
	}
	slices.SortFunc(out, func(a, b persistence.Lease) int { return strings.Compare(a.Handler, b.Handler) })
	return out, nil
}
