package postgres

import (
	"context"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
)

// SynchronousCommit returns the synchronous_commit setting of a
// connection of the store's pool.
func SynchronousCommit(ctx context.Context, s *Store) (string, error) {
	var v string
	err := s.pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&v)
	return v, err
}

// CompactCounters folds the counter deltas now (counters.go).
func CompactCounters(ctx context.Context, s *Store) error { return s.compactCountersOnce(ctx) }

// CounterRows is the number of counter delta rows.
func CounterRows(ctx context.Context, s *Store) (n int, err error) {
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM wfd_counter_deltas`).Scan(&n)
	return n, err
}

// MigrateDownTo takes the database at url back to schema version v with
// the migrations' Down sections, as an older wfd left it.
func MigrateDownTo(ctx context.Context, url string, v int64) error {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer func() { _ = db.Close() }()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithTableName(versionTable))
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, v)
	return err
}

// LimitSessions sets Options.SessionTimeout's limits on cfg, for a
// connection of a test's own that acts as a store's would.
func LimitSessions(cfg *pgx.ConnConfig, d time.Duration) { limitSessions(cfg, d) }

// StopCompacting stops the store's background folding of the counter
// deltas, for a test that folds them itself.
func StopCompacting(s *Store) {
	s.stopCompact()
	<-s.compactDone
}

// WhereSQL returns the statement, and its arguments, that reads the first
// batch of candidates of q, a query with a Where condition (listwhere.go).
func WhereSQL(q *persistence.Query) (string, []any, error) {
	term, ok, err := backend.DriveTerm(q)
	if err != nil {
		return "", nil, err
	}
	c := candidates{q: q}
	if ok {
		c.term = &term
	}
	sql, args := c.sql(nil, q.Limit()+1)
	return sql, args, nil
}
