package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// Schedules are rows of wfd_schedules: the encoded schedule, and beside
// it the columns the due index and the update's condition read. The
// revision column is the truth about a schedule's revision: the encoded
// value is written with revision 0, so that a create or an update is one
// statement that takes the next value of wfd_schedule_revisions itself
// (the value it encodes cannot know it beforehand), and reads take the
// revision from the column.

// scheduleColumns are a schedule's columns for an INSERT or UPDATE:
// paused, next_at, next_ns, sched.
func scheduleColumns(sc *persistence.Schedule) ([]any, error) {
	enc, err := backend.EncodeSchedule(sc, 0)
	if err != nil {
		return nil, err
	}
	next, ns := optTime(sc.NextTick)
	return []any{sc.Paused, next, ns, enc}, nil
}

// CreateSchedule stores s if no schedule has its id: a plain INSERT, so
// a concurrent creator, in this process or another, fails with
// ErrExists.
func (s *Store) CreateSchedule(ctx context.Context, sc persistence.Schedule) (persistence.Schedule, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Schedule{}, err
	}
	sc, err := backend.PrepareSchedule("create schedule", sc)
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("postgres: %w", err)
	}
	cols, err := scheduleColumns(&sc)
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("postgres: create schedule: %w", err)
	}
	cctx, cancel := s.commitContext(ctx)
	defer cancel()
	var rev int64
	err = s.queryRow(cctx, `INSERT INTO wfd_schedules (id, paused, next_at, next_ns, sched, revision)
		VALUES ($1, $2, $3, $4, $5, nextval('wfd_schedule_revisions')) RETURNING revision`,
		append([]any{sc.ID}, cols...)...).Scan(&rev)
	if isUniqueViolation(err, "wfd_schedules_pkey") {
		err = fmt.Errorf("schedule %q: %w", sc.ID, persistence.ErrExists)
	}
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("postgres: create schedule %q: %w", sc.ID, s.classify(ctx, err))
	}
	sc.Revision = uint64(rev)
	return sc, nil
}

// GetSchedule returns the schedule id.
func (s *Store) GetSchedule(ctx context.Context, id string) (persistence.Schedule, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Schedule{}, err
	}
	if err := persistence.ValidateScheduleID(id); err != nil {
		return persistence.Schedule{}, fmt.Errorf("postgres: get schedule: %w", err)
	}
	var (
		rev int64
		raw []byte
	)
	err := s.queryRow(ctx, `SELECT revision, sched FROM wfd_schedules WHERE id = $1`, id).Scan(&rev, &raw)
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("postgres: get schedule: %w", s.notFound(ctx, err, "schedule", id))
	}
	sc, err := decodeSchedule(id, rev, raw)
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("postgres: get schedule: %w", err)
	}
	return sc, nil
}

// decodeSchedule decodes the row (id, revision, sched).
func decodeSchedule(id string, rev int64, raw []byte) (persistence.Schedule, error) {
	sc, err := codec.DecodeStoredSchedule(id, raw)
	if err != nil {
		return persistence.Schedule{}, err
	}
	sc.Revision = uint64(rev)
	return sc, nil
}

// UpdateSchedule replaces the schedule sc.ID if its revision is
// expectRevision, in one statement: the row lock it takes makes a
// concurrent update with the same condition wait, then find the new
// revision and change nothing. Only when nothing changed does a second
// query tell a missing schedule from a conflict.
func (s *Store) UpdateSchedule(ctx context.Context, sc persistence.Schedule, expectRevision uint64) (persistence.Schedule, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Schedule{}, err
	}
	sc, err := backend.PrepareSchedule("update schedule", sc)
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("postgres: %w", err)
	}
	cols, err := scheduleColumns(&sc)
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("postgres: update schedule: %w", err)
	}
	cctx, cancel := s.commitContext(ctx)
	defer cancel()
	var rev int64
	err = s.queryRow(cctx, `UPDATE wfd_schedules SET paused = $2, next_at = $3, next_ns = $4, sched = $5,
		revision = nextval('wfd_schedule_revisions') WHERE id = $1 AND revision = $6 RETURNING revision`,
		append(append([]any{sc.ID}, cols...), int64(expectRevision))...).Scan(&rev)
	if errors.Is(err, pgx.ErrNoRows) {
		err = s.scheduleMissed(cctx, sc.ID, expectRevision)
	}
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("postgres: update schedule %q: %w", sc.ID, s.classify(ctx, err))
	}
	sc.Revision = uint64(rev)
	return sc, nil
}

// scheduleMissed says why an update of id on expectRevision changed
// nothing: there is no such schedule, or its revision is another.
func (s *Store) scheduleMissed(ctx context.Context, id string, expectRevision uint64) error {
	var rev int64
	err := s.queryRow(ctx, `SELECT revision FROM wfd_schedules WHERE id = $1`, id).Scan(&rev)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("schedule %q: %w", id, persistence.ErrNotFound)
	case err != nil:
		return err
	}
	return backend.CheckScheduleRevision(id, uint64(rev), expectRevision)
}

// DeleteSchedule removes the schedule id.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := persistence.ValidateScheduleID(id); err != nil {
		return fmt.Errorf("postgres: delete schedule: %w", err)
	}
	cctx, cancel := s.commitContext(ctx)
	defer cancel()
	n, err := s.execRows(cctx, `DELETE FROM wfd_schedules WHERE id = $1`, id)
	if err == nil && n == 0 {
		err = fmt.Errorf("schedule %q: %w", id, persistence.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: delete schedule %q: %w", id, s.classify(ctx, err))
	}
	return nil
}

// ListSchedules lists schedules in id order, a page after the token's
// id: a range scan of the primary key for one row more than the page,
// which says whether another page follows.
func (s *Store) ListSchedules(ctx context.Context, pageSize int, pageToken string) ([]persistence.Schedule, string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, "", err
	}
	after, err := backend.ScheduleAfter(pageToken)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: list schedules: %w", err)
	}
	limit := persistence.SchedulePageSize(pageSize)
	var (
		out  backend.Listing[persistence.Schedule]
		last string
		n    int // rows read, decoded or not
	)
	more, err := s.scanSchedules(ctx, func(id string, sc persistence.Schedule, err error) bool {
		if n == limit {
			return false
		}
		n++
		last = id
		out.Add(sc, err)
		return true
	}, `SELECT id, revision, sched FROM wfd_schedules WHERE id > $1 ORDER BY id LIMIT $2`, after, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: list schedules: %w", err)
	}
	var next string
	if more {
		next = backend.ScheduleToken(last)
	}
	if err := out.Err("schedules"); err != nil {
		return out.Items, next, fmt.Errorf("postgres: list schedules: %w", err)
	}
	return out.Items, next, nil
}

// DueSchedules returns the schedules due at or before before, earliest
// first, from wfd_schedules_due.
func (s *Store) DueSchedules(ctx context.Context, before time.Time, limit int) ([]persistence.Schedule, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	var out backend.Listing[persistence.Schedule]
	_, err := s.scanSchedules(ctx, func(_ string, sc persistence.Schedule, err error) bool {
		out.Add(sc, err)
		return true
	}, `SELECT id, revision, sched FROM wfd_schedules
		WHERE NOT paused AND next_at IS NOT NULL AND (next_at, next_ns) <= ($1, $2)
		ORDER BY next_at, next_ns, id LIMIT $3`, before, nsOf(before), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: due schedules: %w", err)
	}
	if err := out.Err("schedules"); err != nil {
		return out.Items, fmt.Errorf("postgres: due schedules: %w", err)
	}
	return out.Items, nil
}

// scanSchedules runs a query of rows (id, revision, sched) and calls fn
// with each row decoded (or the error that decoding it met) until fn
// returns false, which it reports as more: a row was left.
func (s *Store) scanSchedules(ctx context.Context, fn func(id string, sc persistence.Schedule, err error) bool,
	sql string, args ...any) (more bool, err error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return false, s.classify(ctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id  string
			rev int64
			raw []byte
		)
		if err := rows.Scan(&id, &rev, &raw); err != nil {
			return false, s.classify(ctx, err)
		}
		sc, err := decodeSchedule(id, rev, raw)
		if !fn(id, sc, err) {
			return true, nil
		}
	}
	if err := rows.Err(); err != nil {
		return false, s.classify(ctx, err)
	}
	return false, nil
}
