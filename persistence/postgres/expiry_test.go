package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestSessionTimeoutFreesLocks: a process that stops in the middle of a
// transaction (SIGSTOP between a Write's two round trips, here a
// transaction left open on purpose) holds the rows it locked only for
// Options.SessionTimeout: the database ends its session, and another
// replica's Acquire, which waited for the lock, goes through, well before
// the leases could have expired. A statement that waits longer than
// that for a lock fails (ErrUnavailable) instead of waiting on.
func TestSessionTimeoutFreesLocks(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	const limit = time.Second
	a := openShared(t, url, postgres.Options{SessionTimeout: limit})
	b := openShared(t, url, postgres.Options{SessionTimeout: limit})
	la := acquireA(t, a, shortTTL)

	// The stopped process: its session as the store configures it, in a
	// transaction holding the lease row as a Write's first round trip does.
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	postgres.LimitSessions(cfg, limit)
	stopped, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stopped.Close(ctx) }()
	if _, err := stopped.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := stopped.Exec(ctx, `SELECT owner FROM wfd_leases WHERE handler_id = 'h' FOR SHARE`); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "A's lease to expire", func() bool {
		got, err := b.Lease(ctx, "h")
		return err == nil && !got.Live
	})
	// B waits for the lock at most until the stopped session is ended
	// (without the limits it would wait as long as the process is
	// stopped: here, until the bound below fails the test).
	actx, cancel := context.WithTimeout(ctx, testwait.Timeout)
	defer cancel()
	lb, ok, err := b.Acquire(actx, "h", "B", longTTL)
	for err != nil && errors.Is(err, persistence.ErrUnavailable) && actx.Err() == nil {
		// lock_timeout may fire first on a slow machine: B's caller retries.
		lb, ok, err = b.Acquire(actx, "h", "B", longTTL)
	}
	if err != nil || !ok || lb.Token <= la.Token {
		t.Fatalf("B's Acquire while A's session held the row = %+v, %v, %v; want acquired above token %d", lb, ok, err, la.Token)
	}
	if _, err := stopped.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("the stopped session is still open after B acquired the lease")
	}
}
