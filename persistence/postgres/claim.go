package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
)

// Claim statements (persistence.Claimer). Each is one statement, so one
// transaction: the picked CTE locks the handler rows FOR UPDATE SKIP
// LOCKED, so a concurrent claim skips them rather than waiting (and never
// picks them too); a Write of one of them waits for the claim, as it
// locks handler rows first too. The upsert then takes the leases as
// sqlAcquireMany does, in handler id order (as Renew locks them, so the two
// cannot deadlock), and its WHERE is checked again against the row as
// committed: a lease an Acquire took meanwhile is not claimed. $1 is the
// replica, $2 the ttl in microseconds, $3 the limit; the picked rows'
// lease must not be live.
const (
	sqlClaimUpsert = `
		INSERT INTO wfd_leases AS l (handler_id, owner, token, acquired_at, expires_at)
		SELECT id, $1, nextval('wfd_lease_tokens'), now(), now() + $2::bigint * interval '1 microsecond'
		FROM picked ORDER BY id
		ON CONFLICT (handler_id) DO UPDATE
		SET owner = excluded.owner, token = ` + sqlNextToken + `, acquired_at = now(), expires_at = excluded.expires_at
		WHERE l.owner = '' OR l.expires_at <= now()
		RETURNING handler_id, owner, token, acquired_at, expires_at, true, ` + sqlLeft
	// sqlClaimDue: $4, $5 the due time (timestamptz, ns), $6 running.
	// Expired leases of the claiming replica are claimed too: it does not
	// have such a handler in memory (it drops them before they expire),
	// and after a restart under the same id nobody else would fire them.
	sqlClaimDue = `WITH due AS (
			SELECT handler_id, min(due_at) AS due_at FROM wfd_timers
			WHERE (due_at, due_ns) <= ($4, $5) GROUP BY handler_id
		), picked AS (
			SELECT h.id FROM wfd_handlers h
			JOIN due d ON d.handler_id = h.id
			LEFT JOIN wfd_leases fl ON fl.handler_id = h.id
			WHERE h.status = $6 AND (fl.handler_id IS NULL OR fl.owner = '' OR fl.expires_at <= now())
			ORDER BY d.due_at, h.id LIMIT $3
			FOR UPDATE OF h SKIP LOCKED
		)` + sqlClaimUpsert
	// sqlClaimOrphans: $4 running, $5 active. A lease of the claiming
	// replica is never claimed here: its own start-up recovers those.
	sqlClaimOrphans = `WITH picked AS (
			SELECT h.id FROM wfd_handlers h
			LEFT JOIN wfd_leases fl ON fl.handler_id = h.id
			WHERE h.status = $4 AND h.residency = $5
				AND (fl.handler_id IS NULL OR fl.owner = '' OR (fl.expires_at <= now() AND fl.owner <> $1))
			ORDER BY h.id LIMIT $3
			FOR UPDATE OF h SKIP LOCKED
		)` + sqlClaimUpsert
	sqlOwners = `SELECT handler_id, owner FROM wfd_leases
		WHERE handler_id = ANY($1) AND owner <> '' AND expires_at > now()`
)

// ClaimDue implements persistence.Claimer.
func (s *Store) ClaimDue(ctx context.Context, replica string, before time.Time, limit int, ttl time.Duration) ([]persistence.Lease, error) {
	return s.claim(ctx, "due timers", sqlClaimDue, replica, limit, ttl, before, nsOf(before), int16(persistence.StatusRunning))
}

// ClaimOrphans implements persistence.Claimer.
func (s *Store) ClaimOrphans(ctx context.Context, replica string, limit int, ttl time.Duration) ([]persistence.Lease, error) {
	return s.claim(ctx, "orphans", sqlClaimOrphans, replica, limit, ttl, int16(persistence.StatusRunning), int16(persistence.ResidencyActive))
}

func (s *Store) claim(ctx context.Context, what, sql, replica string, limit int, ttl time.Duration, args ...any) ([]persistence.Lease, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if replica == "" || ttl <= 0 {
		return nil, fmt.Errorf("%w: postgres: claim %s: needs a replica and a positive ttl", persistence.ErrInvalid, what)
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	rows, err := s.pool.Query(ctx, sql, append([]any{replica, ttl.Microseconds(), limit}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("postgres: claim %s: %w", what, s.classify(ctx, err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (persistence.Lease, error) { return scanLease(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: claim %s: %w", what, s.classify(ctx, err))
	}
	return out, nil
}

// Owners implements persistence.Leaser.
func (s *Store) Owners(ctx context.Context, ids []string) (map[string]string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	out := make(map[string]string)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, sqlOwners, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: owners: %w", s.classify(ctx, err))
	}
	var id, owner string
	if _, err := pgx.ForEachRow(rows, []any{&id, &owner}, func() error {
		out[id] = owner
		return nil
	}); err != nil {
		return nil, fmt.Errorf("postgres: owners: %w", s.classify(ctx, err))
	}
	return out, nil
}
