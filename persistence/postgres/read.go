package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// GetHandler returns a handler's metadata.
func (s *Store) GetHandler(ctx context.Context, id string) (persistence.Handler, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Handler{}, err
	}
	var meta []byte
	err := s.queryRow(ctx, `SELECT meta FROM wfd_handlers WHERE id = $1`, id).Scan(&meta)
	if err != nil {
		return persistence.Handler{}, fmt.Errorf("postgres: get handler: %w", s.notFound(ctx, err, "handler", id))
	}
	h, err := codec.DecodeStoredHandler(id, meta)
	if err != nil {
		return persistence.Handler{}, fmt.Errorf("postgres: get handler: %w", err)
	}
	return h, nil
}

// notFound maps pgx.ErrNoRows to ErrNotFound and classifies the rest.
func (s *Store) notFound(ctx context.Context, err error, what, id string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s %q: %w", what, id, persistence.ErrNotFound)
	}
	return s.classify(ctx, err)
}

// LoadHandler returns a handler's metadata and latest snapshot, read by
// one statement (one snapshot of the database).
func (s *Store) LoadHandler(ctx context.Context, id string) (persistence.Handler, []byte, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Handler{}, nil, err
	}
	var meta, snap []byte
	err := s.queryRow(ctx, `SELECT h.meta, s.data FROM wfd_handlers h LEFT JOIN wfd_snapshots s ON s.handler_id = h.id WHERE h.id = $1`, id).
		Scan(&meta, &snap)
	if err != nil {
		return persistence.Handler{}, nil, fmt.Errorf("postgres: load handler: %w", s.notFound(ctx, err, "handler", id))
	}
	h, err := codec.DecodeStoredHandler(id, meta)
	if err != nil {
		return persistence.Handler{}, nil, fmt.Errorf("postgres: load handler: %w", err)
	}
	return h, snap, nil
}

// LoadSnapshot returns a handler's latest snapshot, or nil if it has none.
func (s *Store) LoadSnapshot(ctx context.Context, id string) ([]byte, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	var snap []byte
	err := s.queryRow(ctx, `SELECT s.data FROM wfd_handlers h LEFT JOIN wfd_snapshots s ON s.handler_id = h.id WHERE h.id = $1`, id).Scan(&snap)
	if err != nil {
		return nil, fmt.Errorf("postgres: load snapshot: %w", s.notFound(ctx, err, "handler", id))
	}
	return snap, nil
}

// ReadRecords returns up to limit records of a handler's stream after
// afterSeq. The handler's existence and its records are read by one
// statement.
func (s *Store) ReadRecords(ctx context.Context, id string, afterSeq uint64, limit int) ([]persistence.Record, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = persistence.DefaultRecordLimit
	}
	if afterSeq == math.MaxUint64 {
		// Nothing can follow; only the handler's existence matters.
		var one int
		err := s.queryRow(ctx, `SELECT 1 FROM wfd_handlers WHERE id = $1`, id).Scan(&one)
		if err != nil {
			return nil, fmt.Errorf("postgres: read records: %w", s.notFound(ctx, err, "handler", id))
		}
		return nil, nil
	}
	// The handler row is joined so that a missing handler is told apart
	// from one without records after afterSeq.
	rows, err := s.pool.Query(ctx, `SELECT r.seq, r.data FROM wfd_handlers h
		LEFT JOIN LATERAL (SELECT seq, data FROM wfd_records WHERE handler_id = h.id AND seq > $2 ORDER BY seq LIMIT $3) r ON true
		WHERE h.id = $1 ORDER BY r.seq`, id, seqToDB(afterSeq), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: read records: %w", s.classify(ctx, err))
	}
	defer rows.Close()
	var (
		recs  []persistence.Record
		found bool
	)
	for rows.Next() {
		var (
			seq  *int64
			data []byte
		)
		if err := rows.Scan(&seq, &data); err != nil {
			return nil, fmt.Errorf("postgres: read records: %w", s.classify(ctx, err))
		}
		found = true
		if seq == nil {
			continue // the handler has no records after afterSeq
		}
		if data == nil {
			data = []byte{}
		}
		recs = append(recs, persistence.Record{Seq: seqFromDB(*seq), Data: data})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read records: %w", s.classify(ctx, err))
	}
	if !found {
		return nil, fmt.Errorf("postgres: read records: handler %q: %w", id, persistence.ErrNotFound)
	}
	return recs, nil
}

// Count returns the counters the triggers keep: the sums of their
// deltas (counters.go).
func (s *Store) Count(ctx context.Context) (persistence.Counts, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Counts{}, err
	}
	rows, err := s.pool.Query(ctx, `SELECT name, sum(n)::bigint FROM wfd_counter_deltas GROUP BY name`)
	if err != nil {
		return persistence.Counts{}, fmt.Errorf("postgres: count: %w", s.classify(ctx, err))
	}
	stored := map[string]int64{}
	for rows.Next() {
		var (
			name string
			n    int64
		)
		if err := rows.Scan(&name, &n); err != nil {
			rows.Close()
			return persistence.Counts{}, fmt.Errorf("postgres: count: %w", s.classify(ctx, err))
		}
		stored[name] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return persistence.Counts{}, fmt.Errorf("postgres: count: %w", s.classify(ctx, err))
	}
	c := persistence.Counts{
		Handlers:      stored["handlers"],
		Idle:          stored["idle"],
		ByStatus:      make(map[persistence.Status]int64),
		ByResidency:   make(map[persistence.Residency]int64),
		TasksByStatus: make(map[persistence.TaskStatus]int64),
	}
	for _, st := range persistence.Statuses() {
		c.ByStatus[st] = stored[fmt.Sprintf("status/%d", int(st))]
	}
	for _, r := range persistence.Residencies() {
		c.ByResidency[r] = stored[fmt.Sprintf("residency/%d", int(r))]
	}
	for _, st := range persistence.TaskStatuses() {
		c.TasksByStatus[st] = stored[fmt.Sprintf("task_status/%d", int(st))]
		c.Tasks += c.TasksByStatus[st]
	}
	return c, nil
}
