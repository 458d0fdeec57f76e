package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wfd-dev/wfd/persistence"
)

// storeLockID is the PostgreSQL advisory lock an exclusive store holds
// (goose's migration lock is another). A store in a schema of its own
// (Options.Schema) holds one of its own: storeLockID mixed with the
// schema's name.
const storeLockID int64 = 0x7766_6473_746f_7265 // "wfdstore"

// lockIDOf is the store lock of schema ("": the default one).
func lockIDOf(schema string) int64 {
	if schema == "" {
		return storeLockID
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(schema))
	return storeLockID ^ int64(h.Sum64()) //nolint:gosec // a lock key: any 64 bits do
}

// InUseError is returned by Open when another process has the database
// open (Options.Shared unset on both). It wraps ErrUnavailable.
type InUseError struct {
	// Holder describes the other process's connection as PostgreSQL sees
	// it: its application name, client address and since when.
	Holder string
}

func (e *InUseError) Error() string {
	return "postgres: the database is in use by another wfd (" + e.Holder + "): one wfd process per database"
}

func (e *InUseError) Unwrap() error { return persistence.ErrUnavailable }

// lockDatabase takes the store's advisory lock on a connection of its
// own, which holds it until Close (or until the connection breaks: a
// session lock goes with its session). It waits up to wait for a holder
// to let go (a process that just died holds it until its server backend
// notices; wait <= 0: not at all).
func lockDatabase(ctx context.Context, cfg *pgx.ConnConfig, wait time.Duration, lockID int64) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, classify(ctx, err)
	}
	ok, err := tryLock(ctx, conn, wait, lockID)
	if err != nil {
		_ = conn.Close(context.Background())
		return nil, classify(ctx, err)
	}
	if ok {
		return conn, nil
	}
	holder := "unknown"
	var (
		app, addr string
		since     time.Time
	)
	err = conn.QueryRow(ctx, `SELECT a.application_name, coalesce(host(a.client_addr), 'local socket'), a.backend_start
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND (l.classid::bigint << 32 | l.objid::bigint) = $1`, lockID).Scan(&app, &addr, &since)
	if err == nil {
		holder = fmt.Sprintf("%q from %s, connected since %s", app, addr, since.UTC().Format(time.RFC3339))
	} else if !errors.Is(err, pgx.ErrNoRows) {
		holder = "unknown: " + err.Error()
	}
	_ = conn.Close(context.Background())
	return nil, &InUseError{Holder: holder}
}

// tryLock takes the lock, waiting up to wait (PostgreSQL's lock_timeout
// bounds pg_advisory_lock's wait), and reports whether it got it.
func tryLock(ctx context.Context, conn *pgx.Conn, wait time.Duration, lockID int64) (bool, error) {
	if wait <= 0 {
		var ok bool
		err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, lockID).Scan(&ok)
		return ok, err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("SET lock_timeout = %d", wait.Milliseconds())); err != nil {
		return false, err
	}
	_, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == codeLockNotAvailable {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = conn.Exec(ctx, "RESET lock_timeout")
	return err == nil, err
}

// unlockDatabase lets go of the lock before its connection closes, so
// that the next store can take it at once (a closed session's locks go
// only when its server backend has ended).
func unlockDatabase(conn *pgx.Conn, lockID int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, lockID)
	_ = conn.Close(ctx)
}
