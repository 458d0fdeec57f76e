package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
)

var _ persistence.Leaser = (*Store)(nil)

// Lease statements. Durations are passed in microseconds ($n::bigint)
// and added to the database's now(): no replica's clock is ever read.
const (
	sqlHeartbeat = `INSERT INTO wfd_replicas AS r (id, address, started_at, expires_at)
		VALUES ($1, $2, now(), now() + $3::bigint * interval '1 microsecond')
		ON CONFLICT (id) DO UPDATE SET address = excluded.address, expires_at = excluded.expires_at
		RETURNING id, address, started_at, expires_at, expires_at > now()`
	sqlReplicas = `SELECT id, address, started_at, expires_at, true FROM wfd_replicas
		WHERE expires_at > now() ORDER BY id`
	// sqlNextToken is an existing lease row l's next token.
	sqlNextToken = `greatest(l.token + 1, nextval('wfd_lease_tokens'))`
	// sqlLeft is a lease row's time left, in microseconds.
	sqlLeft  = `(extract(epoch FROM expires_at - now()) * 1000000)::bigint`
	sqlLease = `SELECT handler_id, owner, token, acquired_at, expires_at, owner <> '' AND expires_at > now(), ` + sqlLeft + `
		FROM wfd_leases WHERE handler_id = $1`
	// The leases are locked in id order first, as Write locks them, so a
	// Renew and a Write cannot deadlock.
	sqlRenew = `WITH held AS (
			SELECT * FROM unnest($2::text[], $3::bigint[]) AS h(handler_id, token)
		), locked AS (
			SELECT l.handler_id FROM wfd_leases l JOIN held h USING (handler_id)
			WHERE l.owner = $1 AND l.token = h.token AND l.expires_at > now()
			ORDER BY l.handler_id FOR UPDATE OF l
		), renewed AS (
			UPDATE wfd_leases l SET expires_at = now() + $4::bigint * interval '1 microsecond'
			FROM locked WHERE l.handler_id = locked.handler_id
			RETURNING l.handler_id
		)
		SELECT handler_id FROM held WHERE handler_id NOT IN (SELECT handler_id FROM renewed)
		ORDER BY handler_id`
	sqlLeave = `WITH gone AS (DELETE FROM wfd_replicas WHERE id = $1)
		UPDATE wfd_leases SET owner = '', expires_at = now() WHERE owner = $1`
	sqlRelease = `UPDATE wfd_leases SET owner = '', expires_at = now()
		WHERE handler_id = $1 AND owner = $2 AND token = $3`
	// Write's lease check, after the handler rows (write.go): FOR SHARE
	// makes an Acquire or Renew of these leases wait for the Write's
	// commit.
	sqlLockLeases = `SELECT handler_id, owner, token, expires_at > now() FROM wfd_leases WHERE handler_id = ANY($1) ORDER BY handler_id FOR SHARE`
	// A deleted handler's lease row goes in its Write: the tokens come
	// from one sequence (sqlAcquireMany), so a new handler under the same id
	// starts above every token of the old one, and no tombstone is
	// needed. Locked in id order first, as Renew locks them.
	sqlDeleteLeases = `DELETE FROM wfd_leases WHERE handler_id IN (
		SELECT handler_id FROM wfd_leases WHERE handler_id = ANY($1) ORDER BY handler_id FOR UPDATE)`
	// The leases of Change.FreeLease, freed in the Write (sqlRelease):
	// the Write checked their fences under FOR SHARE locks it still
	// holds, so they are still its own.
	sqlFreeLeases = `UPDATE wfd_leases SET owner = '', expires_at = now() WHERE handler_id IN (
		SELECT handler_id FROM wfd_leases WHERE handler_id = ANY($1) ORDER BY handler_id FOR UPDATE)`
)

// Heartbeat implements persistence.Leaser.
func (s *Store) Heartbeat(ctx context.Context, id, address string, ttl time.Duration) (persistence.Replica, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Replica{}, err
	}
	if id == "" || ttl <= 0 {
		return persistence.Replica{}, fmt.Errorf("%w: postgres: heartbeat: a replica needs an id and a positive ttl", persistence.ErrInvalid)
	}
	r, err := scanReplica(s.queryRow(ctx, sqlHeartbeat, id, address, ttl.Microseconds()))
	if err != nil {
		return persistence.Replica{}, fmt.Errorf("postgres: heartbeat %q: %w", id, s.classify(ctx, err))
	}
	return r, nil
}

// Replicas implements persistence.Leaser.
func (s *Store) Replicas(ctx context.Context) ([]persistence.Replica, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, sqlReplicas)
	if err != nil {
		return nil, fmt.Errorf("postgres: replicas: %w", s.classify(ctx, err))
	}
	var out []persistence.Replica
	for rows.Next() {
		r, err := scanReplica(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: replicas: %w", s.classify(ctx, err))
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: replicas: %w", s.classify(ctx, err))
	}
	return out, nil
}

// Leave implements persistence.Leaser.
func (s *Store) Leave(ctx context.Context, id string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, sqlLeave, id); err != nil {
		return fmt.Errorf("postgres: leave %q: %w", id, s.classify(ctx, err))
	}
	return nil
}

// Acquire implements persistence.Leaser.
func (s *Store) Acquire(ctx context.Context, handler, replica string, ttl time.Duration) (persistence.Lease, bool, error) {
	if handler == "" {
		return persistence.Lease{}, false, fmt.Errorf("%w: postgres: acquire: a lease needs a handler, a replica and a positive ttl", persistence.ErrInvalid)
	}
	got, elsewhere, err := s.AcquireMany(ctx, []string{handler}, replica, ttl)
	switch {
	case err != nil:
		return persistence.Lease{}, false, err
	case len(got) == 1:
		return got[0], true, nil
	case len(elsewhere) == 1:
		return elsewhere[0], false, nil
	}
	// Taken by another replica between AcquireMany's read and its upsert.
	l, err := s.Lease(ctx, handler)
	if err != nil {
		return persistence.Lease{}, false, err
	}
	return l, false, nil
}

// Renew implements persistence.Leaser.
func (s *Store) Renew(ctx context.Context, replica string, held []persistence.Fence, ttl time.Duration) ([]string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if replica == "" || ttl <= 0 {
		return nil, fmt.Errorf("%w: postgres: renew: needs a replica and a positive ttl", persistence.ErrInvalid)
	}
	if len(held) == 0 {
		return nil, nil
	}
	ids := make([]string, len(held))
	tokens := make([]int64, len(held))
	for i, f := range held {
		if f.Handler == "" || (f.Replica != "" && f.Replica != replica) {
			return nil, fmt.Errorf("%w: postgres: renew: fence %d is %+v, not a handler's lease of %q", persistence.ErrInvalid, i, f, replica)
		}
		ids[i], tokens[i] = f.Handler, int64(f.Token)
	}
	rows, err := s.pool.Query(ctx, sqlRenew, replica, ids, tokens, ttl.Microseconds())
	if err != nil {
		return nil, fmt.Errorf("postgres: renew: %w", s.classify(ctx, err))
	}
	lost, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: renew: %w", s.classify(ctx, err))
	}
	return lost, nil
}

// Release implements persistence.Leaser.
func (s *Store) Release(ctx context.Context, handler string, fence persistence.Fence) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, sqlRelease, handler, fence.Replica, int64(fence.Token))
	if err != nil {
		return fmt.Errorf("postgres: release %q: %w", handler, s.classify(ctx, err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: release %q by %q (token %d): %w", handler, fence.Replica, fence.Token, persistence.ErrFenced)
	}
	return nil
}

// Lease implements persistence.Leaser.
func (s *Store) Lease(ctx context.Context, handler string) (persistence.Lease, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Lease{}, err
	}
	l, err := scanLease(s.queryRow(ctx, sqlLease, handler))
	if errors.Is(err, pgx.ErrNoRows) {
		return persistence.Lease{}, fmt.Errorf("postgres: lease %q: %w", handler, persistence.ErrNotFound)
	}
	if err != nil {
		return persistence.Lease{}, fmt.Errorf("postgres: lease %q: %w", handler, s.classify(ctx, err))
	}
	return l, nil
}

func scanReplica(row pgx.Row) (persistence.Replica, error) {
	var r persistence.Replica
	err := row.Scan(&r.ID, &r.Address, &r.Started, &r.Expires, &r.Live)
	return r, err
}

func scanLease(row pgx.Row) (persistence.Lease, error) {
	var (
		l           persistence.Lease
		token, left int64
	)
	err := row.Scan(&l.Handler, &l.Owner, &token, &l.Acquired, &l.Expires, &l.Live, &left)
	l.Token, l.Left = uint64(token), time.Duration(left)*time.Microsecond
	return l, err
}

// goneIDs are the handlers the Write deletes and does not create again:
// their lease rows go with them.
func (w *writeSet) goneIDs() []string {
	var out []string
	for _, id := range w.deleteIDs {
		if !w.handlers[id].exists {
			out = append(out, id)
		}
	}
	return out
}

// leaseRow is a lease as Write's locked read finds it.
type leaseRow struct {
	owner string
	token uint64
	live  bool // not expired, by the database's clock
}

// checkFence refuses a change whose fence no longer holds its handler's
// lease.
func (w *writeSet) checkFence(id string, f persistence.Fence) error {
	if f.IsZero() {
		return nil
	}
	l, ok := w.leases[id]
	switch {
	case !ok:
		return fmt.Errorf("handler %q has no lease (fence %q, token %d): %w", id, f.Replica, f.Token, persistence.ErrFenced)
	case l.owner != f.Replica || l.token != f.Token:
		return fmt.Errorf("handler %q: lease is %q's with token %d, not %q's with token %d: %w", id, l.owner, l.token, f.Replica, f.Token, persistence.ErrFenced)
	case !l.live:
		// Nobody took it yet, but anyone may: a replica that did not renew
		// in time (paused, cut off) must not commit what it did meanwhile,
		// whose callers may have been told it failed.
		return fmt.Errorf("handler %q: %q's lease (token %d) has expired: %w", id, f.Replica, f.Token, persistence.ErrFenced)
	}
	return nil
}
