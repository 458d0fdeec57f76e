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

// sqlAcquireMany takes the leases of many handlers (Acquire is one) in
// one statement, so one commit (and WAL flush) for all of them. A
// conflicting insert waits for the other's commit and then evaluates the
// WHERE against the row it committed, so among concurrent acquirers
// exactly one gets a row back. The token comes from wfd_lease_tokens
// (migration 00003), drawn when the row is written: above every token
// issued before, so a handler's lease row may go with the handler
// (write.go) and a new handler of the same id still never gets an old
// token (greatest: a row an older wfd bumped past the sequence still only
// grows). The leases other replicas hold live are read first and left
// out of the upsert, which would lock (and so write) their rows even when
// its WHERE refuses them: a batch of handlers live elsewhere commits
// nothing. The others are taken in id order, as Renew and Write lock
// them. The last column says which rows were acquired.
const sqlAcquireMany = `WITH held AS (
		SELECT handler_id, owner, token, acquired_at, expires_at FROM wfd_leases
		WHERE handler_id = ANY($1) AND owner <> '' AND owner <> $2 AND expires_at > now()
	), taken AS (
		INSERT INTO wfd_leases AS l (handler_id, owner, token, acquired_at, expires_at)
		SELECT h, $2, nextval('wfd_lease_tokens'), now(), now() + $3::bigint * interval '1 microsecond'
		FROM unnest($1::text[]) AS h WHERE h NOT IN (SELECT handler_id FROM held) ORDER BY h
		ON CONFLICT (handler_id) DO UPDATE
		SET owner = excluded.owner, token = ` + sqlNextToken + `, acquired_at = now(), expires_at = excluded.expires_at
		WHERE l.owner = '' OR l.owner = excluded.owner OR l.expires_at <= now()
		RETURNING handler_id, owner, token, acquired_at, expires_at
	)
	SELECT handler_id, owner, token, acquired_at, expires_at, true, true, ` + sqlLeft + ` FROM taken
	UNION ALL
	SELECT handler_id, owner, token, acquired_at, expires_at, true, false, ` + sqlLeft + ` FROM held`

// AcquireMany implements persistence.Leaser.
func (s *Store) AcquireMany(ctx context.Context, handlers []string, replica string, ttl time.Duration) (acquired, elsewhere []persistence.Lease, err error) {
	if err := s.begin(ctx); err != nil {
		return nil, nil, err
	}
	if replica == "" || ttl <= 0 || slices.Contains(handlers, "") {
		return nil, nil, fmt.Errorf("%w: postgres: acquire: a lease needs a handler, a replica and a positive ttl", persistence.ErrInvalid)
	}
	// One row per handler: an upsert may not touch a row twice.
	ids := slices.Compact(slices.Sorted(slices.Values(handlers)))
	if len(ids) == 0 {
		return nil, nil, nil
	}
	rows, err := s.pool.Query(ctx, sqlAcquireMany, ids, replica, ttl.Microseconds())
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: acquire %d handlers: %w", len(ids), s.classify(ctx, err))
	}
	var (
		l           persistence.Lease
		token, left int64
		took        bool
	)
	_, err = pgx.ForEachRow(rows, []any{&l.Handler, &l.Owner, &token, &l.Acquired, &l.Expires, &l.Live, &took, &left}, func() error {
		l.Token, l.Left = uint64(token), time.Duration(left)*time.Microsecond
		if took {
			acquired = append(acquired, l)
		} else {
			elsewhere = append(elsewhere, l)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: acquire %d handlers: %w", len(ids), s.classify(ctx, err))
	}
	byHandler := func(a, b persistence.Lease) int { return strings.Compare(a.Handler, b.Handler) }
	slices.SortFunc(acquired, byHandler)
	slices.SortFunc(elsewhere, byHandler)
	return acquired, elsewhere, nil
}
