package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestLeaseExpiredIsLost: a lease that expired is its holder's no more,
// even while nobody has taken it: a fenced Write under it is refused
// (a replica paused past its lease commits nothing it did meanwhile) and
// Renew reports it lost instead of bringing it back. Acquiring it again
// gives a new token.
func TestLeaseExpiredIsLost(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a := openShared(t, url, postgres.Options{})
	l := mustAcquire(t, a, "h", "A", longTTL)
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: l.Fence()}); err != nil {
		t.Fatalf("fenced create: %v", err)
	}
	if lost, err := a.Renew(ctx, "A", []persistence.Fence{l.Fence()}, shortTTL); err != nil || len(lost) != 0 {
		t.Fatalf("Renew = %v, %v; want nothing lost", lost, err)
	}
	testwait.For(t, "the lease to expire", func() bool {
		got, err := a.Lease(ctx, "h")
		return err == nil && !got.Live
	})

	err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Fence: l.Fence(), Records: []persistence.Record{{Seq: 1, Data: []byte("late")}}})
	if !errors.Is(err, persistence.ErrFenced) {
		t.Fatalf("Write under an expired lease nobody took: %v, want ErrFenced", err)
	}
	if recs, err := a.ReadRecords(ctx, "h", 0, 0); err != nil || len(recs) != 0 {
		t.Fatalf("records after the refused Write = %v, %v; want none", recs, err)
	}
	if lost, err := a.Renew(ctx, "A", []persistence.Fence{l.Fence()}, longTTL); err != nil || !slices.Equal(lost, []string{"h"}) {
		t.Fatalf("Renew of an expired lease = %v, %v; want [h] lost", lost, err)
	}
	again := mustAcquire(t, a, "h", "A", longTTL)
	if again.Token <= l.Token {
		t.Fatalf("token after the expiry %d, not above %d", again.Token, l.Token)
	}
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Fence: again.Fence()}); err != nil {
		t.Fatalf("Write under the new lease: %v", err)
	}
}

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
	la := mustAcquire(t, a, "h", "A", shortTTL)

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
