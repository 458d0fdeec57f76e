package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/wfd-dev/wfd/persistence"
)

// The schema's migrations, embedded in the binary: a wfd brings the
// database it is given up to its own schema when it opens it.
//
//go:embed migrations/*.sql
var migrations embed.FS

// versionTable is where goose records the applied migrations.
const versionTable = "wfd_schema_version"

// migrate applies the migrations the database has not seen, under a
// PostgreSQL advisory lock (goose's session locker), so several wfd
// processes starting on one database at once apply each migration once.
// A database with a migration this binary does not know (a newer wfd
// migrated it) is refused rather than used with a schema it does not
// understand.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	// Retry the lock every second (goose's minimum; its default is 5 s)
	// for up to 5 minutes.
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer func() { _ = db.Close() }()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithTableName(versionTable), goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// Without the lock first: an up-to-date database, the usual case,
	// costs one query, and processes starting together do not queue.
	pending, err := p.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", classify(ctx, err))
	}
	if !pending {
		return checkVersion(ctx, p)
	}
	if _, err := p.Up(ctx); err != nil {
		var partial *goose.PartialError
		if errors.As(err, &partial) || errors.Is(err, goose.ErrVersionNotFound) {
			return fmt.Errorf("%w: migrate: %w", persistence.ErrCorrupt, err)
		}
		return fmt.Errorf("migrate: %w", classify(ctx, err))
	}
	return checkVersion(ctx, p)
}

// checkVersion refuses a database migrated by a newer wfd.
func checkVersion(ctx context.Context, p *goose.Provider) error {
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", classify(ctx, err))
	}
	sources := p.ListSources()
	if latest := sources[len(sources)-1].Version; current > latest {
		return fmt.Errorf("%w: the database's schema is version %d, newer than this wfd knows (%d): upgrade wfd", persistence.ErrCorrupt, current, latest)
	}
	return nil
}
