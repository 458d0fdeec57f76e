package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
)

// Concurrency keys are rows of wfd_slot_keys (the header) and wfd_slots
// (one per handler holding or queued); see migration 00009. UpdateSlots
// runs the shared rules (backend.ApplySlots) in one transaction that
// holds the key's advisory lock.

// slotLock is the class of the keys' transaction-scoped advisory locks.
const slotLock = 0x77666473 // "wfds"

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func checkSlotKey(k persistence.SlotKey) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if strings.ContainsRune(k.Workflow, 0) || strings.ContainsRune(k.Key, 0) {
		return fmt.Errorf("%w: concurrency key %s: a NUL", persistence.ErrInvalid, k)
	}
	return nil
}

// slotRows are a key's rows in a transaction (backend.SlotRows).
type slotRows struct {
	ctx context.Context
	tx  pgx.Tx
	k   persistence.SlotKey
}

func (r slotRows) Find(id string) (holding bool, seq uint64, found bool, err error) {
	var s int64
	err = r.tx.QueryRow(r.ctx, `SELECT holding, seq FROM wfd_slots WHERE workflow = $1 AND key = $2 AND handler_id = $3`,
		r.k.Workflow, r.k.Key, id).Scan(&holding, &s)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, 0, false, nil
	}
	return holding, uint64(s), err == nil, err
}

func (r slotRows) Insert(id string, seq uint64, at time.Time, holding bool) error {
	_, err := r.tx.Exec(r.ctx, `INSERT INTO wfd_slots (workflow, key, handler_id, holding, seq, at, pending) VALUES ($1, $2, $3, $4, $5, $6, false)`,
		r.k.Workflow, r.k.Key, id, holding, int64(seq), nanos(at))
	return err
}

func (r slotRows) Delete(id string, _ bool, _ uint64) error {
	_, err := r.tx.Exec(r.ctx, `DELETE FROM wfd_slots WHERE workflow = $1 AND key = $2 AND handler_id = $3`, r.k.Workflow, r.k.Key, id)
	return err
}

func (r slotRows) Head() (string, uint64, bool, error) {
	var (
		id  string
		seq int64
	)
	err := r.tx.QueryRow(r.ctx, `SELECT handler_id, seq FROM wfd_slots WHERE workflow = $1 AND key = $2 AND NOT holding ORDER BY seq LIMIT 1`,
		r.k.Workflow, r.k.Key).Scan(&id, &seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, false, nil
	}
	return id, uint64(seq), err == nil, err
}

func (r slotRows) Admit(id string, _ uint64, at time.Time) error {
	_, err := r.tx.Exec(r.ctx, `UPDATE wfd_slots SET holding = true, at = $4, pending = true WHERE workflow = $1 AND key = $2 AND handler_id = $3`,
		r.k.Workflow, r.k.Key, id, nanos(at))
	return err
}

func (r slotRows) Position(seq uint64) (int, error) {
	var n int
	err := r.tx.QueryRow(r.ctx, `SELECT count(*) FROM wfd_slots WHERE workflow = $1 AND key = $2 AND NOT holding AND seq < $3`,
		r.k.Workflow, r.k.Key, int64(seq)).Scan(&n)
	return n + 1, err
}

func (r slotRows) Deliver(id string) error {
	_, err := r.tx.Exec(r.ctx, `UPDATE wfd_slots SET pending = false WHERE workflow = $1 AND key = $2 AND handler_id = $3 AND pending`,
		r.k.Workflow, r.k.Key, id)
	return err
}

// UpdateSlots applies c to key k (persistence.Slots).
func (s *Store) UpdateSlots(ctx context.Context, k persistence.SlotKey, c persistence.SlotChange) (persistence.SlotResult, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.SlotResult{}, err
	}
	if err := checkSlotKey(k); err != nil {
		return persistence.SlotResult{}, fmt.Errorf("postgres: %w", err)
	}
	cctx, cancel := s.commitContext(ctx)
	defer cancel()
	var res persistence.SlotResult
	err := pgx.BeginFunc(cctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(cctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(slotLock), k.Workflow+"\x1f"+k.Key); err != nil {
			return err
		}
		var (
			h   backend.SlotHeader
			raw []byte
		)
		err := tx.QueryRow(cctx, `SELECT header FROM wfd_slot_keys WHERE workflow = $1 AND key = $2`, k.Workflow, k.Key).Scan(&raw)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			if h, err = backend.DecodeSlotHeader(raw); err != nil {
				return err
			}
		}
		if res, err = backend.ApplySlots(&h, slotRows{ctx: cctx, tx: tx, k: k}, c); err != nil {
			return err
		}
		if h.Holding == 0 && h.Queued == 0 && h.NextDue.IsZero() && len(h.Window) == 0 {
			_, err = tx.Exec(cctx, `DELETE FROM wfd_slot_keys WHERE workflow = $1 AND key = $2`, k.Workflow, k.Key)
			return err
		}
		var due *int64
		if !h.NextDue.IsZero() {
			n := nanos(h.NextDue)
			due = &n
		}
		_, err = tx.Exec(cctx, `INSERT INTO wfd_slot_keys (workflow, key, header, next_due) VALUES ($1, $2, $3, $4)
			ON CONFLICT (workflow, key) DO UPDATE SET header = EXCLUDED.header, next_due = EXCLUDED.next_due`,
			k.Workflow, k.Key, backend.EncodeSlotHeader(&h), due)
		return err
	})
	if err != nil {
		return persistence.SlotResult{}, fmt.Errorf("postgres: concurrency key %s: %w", k, s.classify(ctx, err))
	}
	return res, nil
}

// SlotOf returns where handler id stands in key k (persistence.Slots).
func (s *Store) SlotOf(ctx context.Context, k persistence.SlotKey, id string) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	if err := checkSlotKey(k); err != nil {
		return 0, fmt.Errorf("postgres: %w", err)
	}
	var (
		holding bool
		pos     int
	)
	err := s.queryRow(ctx, `SELECT h.holding, (SELECT count(*) FROM wfd_slots q WHERE q.workflow = h.workflow AND q.key = h.key AND NOT q.holding AND q.seq < h.seq)
		FROM wfd_slots h WHERE h.workflow = $1 AND h.key = $2 AND h.handler_id = $3`, k.Workflow, k.Key, id).Scan(&holding, &pos)
	if err != nil {
		return 0, fmt.Errorf("postgres: concurrency key %s: %w", k, s.notFound(ctx, err, "handler", id))
	}
	if holding {
		return 0, nil
	}
	return pos + 1, nil
}

// ListSlots returns key k's holders and the head of its queue
// (persistence.Slots).
func (s *Store) ListSlots(ctx context.Context, k persistence.SlotKey, limit int) (holders, queue []persistence.SlotEntry, err error) {
	if err := s.begin(ctx); err != nil {
		return nil, nil, err
	}
	if err := checkSlotKey(k); err != nil {
		return nil, nil, fmt.Errorf("postgres: %w", err)
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	rows, err := s.pool.Query(ctx, `(SELECT handler_id, holding, at, pending, seq FROM wfd_slots WHERE workflow = $1 AND key = $2 AND holding)
		UNION ALL (SELECT handler_id, holding, at, pending, seq FROM wfd_slots WHERE workflow = $1 AND key = $2 AND NOT holding ORDER BY seq LIMIT $3)
		ORDER BY holding DESC, seq`, k.Workflow, k.Key, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: concurrency key %s: %w", k, s.classify(ctx, err))
	}
	defer rows.Close()
	for rows.Next() {
		var (
			e       persistence.SlotEntry
			holding bool
			at, seq int64
		)
		if err := rows.Scan(&e.HandlerID, &holding, &at, &e.Pending, &seq); err != nil {
			return nil, nil, fmt.Errorf("postgres: concurrency key %s: %w", k, s.classify(ctx, err))
		}
		e.At = fromNanos(at)
		if holding {
			holders = append(holders, e)
		} else {
			queue = append(queue, e)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("postgres: concurrency key %s: %w", k, s.classify(ctx, err))
	}
	return holders, queue, nil
}

// SlotKeys returns the keys after after, with their counts
// (persistence.Slots).
func (s *Store) SlotKeys(ctx context.Context, after persistence.SlotKey, limit int) ([]persistence.SlotKeyInfo, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	rows, err := s.pool.Query(ctx, `SELECT workflow, key, header FROM wfd_slot_keys WHERE (workflow, key) > ($1, $2) ORDER BY workflow, key LIMIT $3`,
		after.Workflow, after.Key, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: concurrency keys: %w", s.classify(ctx, err))
	}
	defer rows.Close()
	var out []persistence.SlotKeyInfo
	for rows.Next() {
		var (
			k   persistence.SlotKeyInfo
			raw []byte
		)
		if err := rows.Scan(&k.Workflow, &k.Key, &raw); err != nil {
			return nil, fmt.Errorf("postgres: concurrency keys: %w", s.classify(ctx, err))
		}
		h, err := backend.DecodeSlotHeader(raw)
		if err != nil {
			return nil, fmt.Errorf("postgres: concurrency key %s: %w", k.SlotKey, err)
		}
		k.Holding, k.Queued, k.NextDue = h.Holding, h.Queued, h.NextDue
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: concurrency keys: %w", s.classify(ctx, err))
	}
	return out, nil
}

// DueSlots returns the keys the rate lets in by before (persistence.Slots).
func (s *Store) DueSlots(ctx context.Context, before time.Time, limit int) ([]persistence.SlotKey, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	rows, err := s.pool.Query(ctx, `SELECT workflow, key FROM wfd_slot_keys WHERE next_due IS NOT NULL AND next_due <= $1 ORDER BY next_due, workflow, key LIMIT $2`,
		nanos(before), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: due concurrency keys: %w", s.classify(ctx, err))
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (persistence.SlotKey, error) {
		var k persistence.SlotKey
		return k, r.Scan(&k.Workflow, &k.Key)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: due concurrency keys: %w", s.classify(ctx, err))
	}
	return keys, nil
}

// PendingSlots returns the holders not yet told (persistence.Slots).
func (s *Store) PendingSlots(ctx context.Context, limit int) ([]persistence.SlotPending, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	rows, err := s.pool.Query(ctx, `SELECT workflow, key, handler_id, at FROM wfd_slots WHERE pending ORDER BY at, workflow, key, handler_id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: pending concurrency entries: %w", s.classify(ctx, err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (persistence.SlotPending, error) {
		var (
			p  persistence.SlotPending
			at int64
		)
		err := r.Scan(&p.Workflow, &p.Key, &p.HandlerID, &at)
		p.At, p.Pending = fromNanos(at), true
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: pending concurrency entries: %w", s.classify(ctx, err))
	}
	return out, nil
}
