package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wfd-dev/wfd/persistence"
)

// Defaults for Options.
const (
	DefaultMaxConns     = 8
	DefaultWriteTimeout = time.Minute
	DefaultConnTimeout  = 10 * time.Second
	DefaultLockWait     = 10 * time.Second
)

// Options configure Open. The zero value is the production setting.
type Options struct {
	// MaxConns bounds the connection pool; 0 means DefaultMaxConns (or
	// the URL's pool_max_conns).
	MaxConns int32
	// WriteTimeout bounds a Write, Publish or workflow put once it has
	// been handed to the database: those do not stop when the caller's
	// context ends (the caller could not tell a cancelled commit from a
	// committed one), so this is what ends one stuck on a dead
	// connection. 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// ConnTimeout bounds establishing a connection; 0 means
	// DefaultConnTimeout (or the URL's connect_timeout).
	ConnTimeout time.Duration
	// Shared lets other stores use the database at the same time. By
	// default a store holds an advisory lock while it is open, and Open
	// fails with an InUseError while another store holds it: one wfd
	// process per database, until replicas share one with leases.
	Shared bool
	// LockWait is how long Open waits for another store to let go of the
	// database (a process killed a moment ago holds it until its server
	// backend notices); 0 means DefaultLockWait, negative not at all.
	LockWait time.Duration
	// SessionTimeout, if set, bounds what the store's sessions may hold
	// and wait for: each connection runs with lock_timeout and
	// idle_in_transaction_session_timeout at SessionTimeout and
	// statement_timeout at twice it. Replica mode sets it to half the
	// lease ttl: a replica that is paused or cut off mid-transaction
	// loses that transaction and its row locks before its leases can
	// expire, so the replicas taking its handlers over never wait for it,
	// and a statement waiting on a lock fails (ErrUnavailable, retried)
	// instead of outlasting its caller. 0 keeps the database's settings.
	// Migrations at Open run on a connection of their own without them.
	SessionTimeout time.Duration
	// Schema, if set, keeps the store's tables in that PostgreSQL schema
	// (created if missing) instead of the database's default search path:
	// several stores share one database, each in its schema, without
	// seeing each other (a wfd namespace each). Its name is 1 to 63
	// lower-case letters, digits and underscores, starting with a letter.
	// Each schema has its own migrations, exclusive lock and commit feed.
	Schema string
}

// checkSchema accepts what Options.Schema may be: a name that needs no
// quoting in SQL.
func checkSchema(name string) error {
	if len(name) == 0 || len(name) > 63 || name[0] < 'a' || name[0] > 'z' {
		return fmt.Errorf("%w: postgres: schema %q: 1 to 63 characters, starting with a-z", persistence.ErrInvalid, name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return fmt.Errorf("%w: postgres: schema %q: character %q not allowed (a-z 0-9 _)", persistence.ErrInvalid, name, c)
		}
	}
	return nil
}

// createSchema creates the store's schema if it is missing. Replicas
// starting at once may race to create it; the loser's error is the
// schema existing, which is what it wanted.
func createSchema(ctx context.Context, cfg *pgx.ConnConfig, schema string) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return classify(ctx, err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err = conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "42P06") {
			return nil
		}
		return classify(ctx, err)
	}
	return nil
}

// Store is a persistence.Store on a PostgreSQL database.
type Store struct {
	pool         *pgxpool.Pool
	lock         *pgx.Conn // holds the advisory lock; nil with Options.Shared
	lockID       int64     // the advisory lock's key (lockIDOf)
	channel      string    // the commit feed's channel (channelOf)
	writeTimeout time.Duration
	closed       atomic.Bool
	pub          publisher
	stopCompact  context.CancelFunc
	compactDone  chan struct{}
}

var _ persistence.Store = (*Store)(nil)

// IsURL reports whether s names a PostgreSQL database (postgres:// or
// postgresql://), as opposed to a bbolt file path.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database at url (postgres://user:pass@host:port/db?...),
// brings its schema up to date (migrate.go) and returns the store. A
// database that cannot be reached fails with ErrUnavailable; one whose
// schema is newer than this wfd knows fails with ErrCorrupt.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres: %s: %w", persistence.ErrInvalid, redact(url), err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	} else if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	if opts.ConnTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = opts.ConnTimeout
	} else if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnTimeout
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "wfd"
	}
	cfg.AfterConnect = durableCommits
	if opts.Schema != "" {
		if err := checkSchema(opts.Schema); err != nil {
			return nil, err
		}
		if err := createSchema(ctx, cfg.ConnConfig.Copy(), opts.Schema); err != nil {
			return nil, fmt.Errorf("postgres: open %s: schema %s: %w", redact(url), opts.Schema, err)
		}
		// Only the schema: no table of another store (or of the public
		// schema) can be read by mistake.
		cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	}
	migrateCfg := cfg.Copy()
	if opts.SessionTimeout > 0 {
		limitSessions(cfg.ConnConfig, opts.SessionTimeout)
	}
	var lock *pgx.Conn
	if !opts.Shared {
		wait := opts.LockWait
		if wait == 0 {
			wait = DefaultLockWait
		}
		if lock, err = lockDatabase(ctx, cfg.ConnConfig.Copy(), wait, lockIDOf(opts.Schema)); err != nil {
			return nil, fmt.Errorf("postgres: open %s: %w", redact(url), err)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		if lock != nil {
			_ = lock.Close(context.Background())
		}
		return nil, fmt.Errorf("postgres: open %s: %w", redact(url), classify(ctx, err))
	}
	s := &Store{pool: pool, lock: lock, lockID: lockIDOf(opts.Schema), channel: channelOf(opts.Schema), writeTimeout: opts.WriteTimeout}
	s.pub.s = s
	if s.writeTimeout <= 0 {
		s.writeTimeout = DefaultWriteTimeout
	}
	if err := migrateWith(ctx, pool, migrateCfg, opts.SessionTimeout > 0); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("postgres: open %s: %w", redact(url), err)
	}
	cctx, stop := context.WithCancel(context.Background())
	s.stopCompact, s.compactDone = stop, make(chan struct{})
	go func() {
		defer close(s.compactDone)
		s.compactCounters(cctx)
	}()
	return s, nil
}

// limitSessions sets the session limits of Options.SessionTimeout.
func limitSessions(cfg *pgx.ConnConfig, d time.Duration) {
	ms := func(d time.Duration) string { return strconv.FormatInt(max(d.Milliseconds(), 1), 10) }
	cfg.RuntimeParams["lock_timeout"] = ms(d)
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = ms(d)
	cfg.RuntimeParams["statement_timeout"] = ms(2 * d)
}

// migrateWith migrates the database through pool, or, when the pool's
// sessions are limited (a migration may take longer than a statement
// may), through a pool of its own made from cfg.
func migrateWith(ctx context.Context, pool *pgxpool.Pool, cfg *pgxpool.Config, limited bool) error {
	if !limited {
		return migrate(ctx, pool)
	}
	cfg.MaxConns = 2 // goose's lock session and its statements
	mp, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return classify(ctx, err)
	}
	defer mp.Close()
	return migrate(ctx, mp)
}

// durableCommits turns synchronous_commit back on for the store's
// connections if the server, the database or the role turned it off: a
// Write must return only once its commit is on disk. Any other setting
// (on, local, remote_write, remote_apply) is at least that and is kept.
func durableCommits(ctx context.Context, conn *pgx.Conn) error {
	var v string
	if err := conn.QueryRow(ctx, "SHOW synchronous_commit").Scan(&v); err != nil {
		return err
	}
	if v == "off" {
		_, err := conn.Exec(ctx, "SET synchronous_commit = on")
		return err
	}
	return nil
}

// redact removes the password from a URL for error messages and logs.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// Redact returns url without its password, for logs.
func Redact(url string) string { return redact(url) }

// Close closes the pool. It waits for operations in progress; later calls
// fail with ErrUnavailable. Closing twice is a no-op.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.stopCompact != nil {
		s.stopCompact()
		<-s.compactDone
	}
	s.pool.Close()
	if s.lock != nil {
		unlockDatabase(s.lock, s.lockID)
	}
	return nil
}

// begin is called at the start of every operation.
func (s *Store) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return fmt.Errorf("%w: postgres: store is closed", persistence.ErrUnavailable)
	}
	return nil
}

// commitContext is the context of a commit once begin has passed: it does
// not end with ctx (see Options.WriteTimeout).
func (s *Store) commitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.writeTimeout)
}

// PostgreSQL error codes the store maps.
const (
	codeUniqueViolation  = "23505"
	codeBadEncoding      = "22021" // invalid byte sequence for the encoding (not UTF-8)
	codeUntranslatable   = "22P05"
	codeStringTooLong    = "22001"
	codeProgramLimit     = "54000" // e.g. an index row too large
	codeLockNotAvailable = "55P03"
)

// classify passes through errors that are already classified (ours, the
// caller's context) and maps the rest: bad input PostgreSQL refuses (a
// string that is not UTF-8, an index row too large) is ErrInvalid, and
// everything else (the database cannot be reached, the connection broke,
// a timeout of ours, a deadlock) is ErrUnavailable: retrying later may
// succeed.
func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if isClassified(err) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: postgres: %w", persistence.ErrUnavailable, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeBadEncoding, codeUntranslatable, codeStringTooLong, codeProgramLimit:
			return fmt.Errorf("%w: postgres: %w", persistence.ErrInvalid, err)
		}
	}
	return fmt.Errorf("%w: postgres: %w", persistence.ErrUnavailable, err)
}

// classify is the package's classify, and it also drops the pool's
// connections when err says the connection broke: the server restarted
// or the network failed, so the other pooled connections are most likely
// dead too, and each would fail one more call before the pool noticed.
func (s *Store) classify(ctx context.Context, err error) error {
	if err != nil && brokenConnection(err) {
		s.pool.Reset()
	}
	return classify(ctx, err)
}

// brokenConnection reports whether err is a failure of the connection
// itself (not a statement's error, not a context's).
func brokenConnection(err error) bool {
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr):
		// The server shutting down or crashing tells the client so.
		return strings.HasPrefix(pgErr.Code, "57P") || strings.HasPrefix(pgErr.Code, "08")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), isClassified(err):
		return false
	}
	return true
}

func isClassified(err error) bool {
	for _, target := range []error{
		persistence.ErrNotFound, persistence.ErrExists, persistence.ErrConflict,
		persistence.ErrInvalid, persistence.ErrUnavailable, persistence.ErrCorrupt,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// isUniqueViolation reports whether err is a unique violation of the
// named constraint ("" for any).
func isUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == codeUniqueViolation &&
		(constraint == "" || pgErr.ConstraintName == constraint)
}

// rollback ends a failed transaction on conn, ignoring errors: a broken
// connection is discarded by the pool anyway.
func rollback(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() != 'I' {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
			// The connection's state is unknown: do not reuse it.
			_ = conn.Conn().Close(ctx)
		}
	}
}

// inTx runs fn, which begins and ends a transaction, on a connection of
// the pool, and rolls back what it left open if it fails.
func (s *Store) inTx(ctx context.Context, fn func(conn *pgxpool.Conn) error) (err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	defer func() {
		if err != nil {
			rollback(conn)
		}
	}()
	return fn(conn)
}

// queryRow runs a one-row query in the pool.
func (s *Store) queryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return s.pool.QueryRow(ctx, sql, args...)
}
