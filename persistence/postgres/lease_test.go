package postgres_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// The lease tests here are PostgreSQL's own: a connection cut, schemas
// migrated, sessions limited, rows locked by hand. What every store with
// leases does is storetest's (RunReplicas, TestConformanceReplicas). Each
// of them is about one handler, h, and the lease replica A takes of it.

// Lease durations of the tests: long enough never to expire during a
// test, short enough to expire soon after it is set (tests then poll for
// the expiry, measured by the database's clock).
const (
	longTTL  = time.Hour
	shortTTL = 200 * time.Millisecond
)

// openShared opens a store on url that shares the database with others,
// as one replica of several.
func openShared(t *testing.T, url string, opts postgres.Options) *postgres.Store {
	t.Helper()
	opts.Shared = true
	s, err := postgres.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// acquireA takes h's lease for replica A, for ttl.
func acquireA(t *testing.T, s *postgres.Store, ttl time.Duration) persistence.Lease {
	t.Helper()
	l, ok, err := s.Acquire(t.Context(), "h", "A", ttl)
	if err != nil || !ok {
		t.Fatalf("A: Acquire(h) = %+v, %v, %v; want acquired", l, ok, err)
	}
	if l.Owner != "A" || l.Handler != "h" || !l.Live || l.Token == 0 {
		t.Fatalf("A: Acquire(h) = %+v", l)
	}
	return l
}

// ownedBy returns h as replica owner writes it.
func ownedBy(owner string) persistence.Handler {
	h := testHandler("h")
	h.Owner = owner
	return h
}

// checkOwnerA fails the test (what: after what) unless h's stored Owner
// is A.
func checkOwnerA(t *testing.T, s *postgres.Store, what string) {
	t.Helper()
	h, err := s.GetHandler(t.Context(), "h")
	if err != nil || h.Owner != "A" {
		t.Fatalf("%s, h = %+v, %v; want owner A", what, h, err)
	}
}

// TestLeasePartitioned: replica A loses its database connection (a TCP
// proxy cuts it) while it holds a lease; the lease expires, B takes it;
// when A's connection is back, A's Write is refused by the database and
// changes nothing.
func TestLeasePartitioned(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	p := startProxy(t, hostPort(t, url))
	a := openShared(t, strings.Replace(url, hostPort(t, url), p.addr(), 1), postgres.Options{WriteTimeout: 10 * time.Second})
	b := openShared(t, url, postgres.Options{})

	la := acquireA(t, a, shortTTL)
	// Accepted even if the lease has expired already: nobody took it.
	if err := a.Write(ctx, persistence.Change{Handler: ownedBy("A"), Create: true, Fence: la.Fence()}); err != nil {
		t.Fatalf("A's fenced create: %v", err)
	}
	p.cut()
	write := func() error {
		return a.Write(ctx, persistence.Change{Handler: ownedBy("A-late"), Fence: la.Fence()})
	}
	if err := write(); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("A's Write with its connection cut: %v, want ErrUnavailable", err)
	}
	var lb persistence.Lease
	testwait.Until(t, func() error { // until A's lease expires
		var (
			ok  bool
			err error
		)
		if lb, ok, err = b.Acquire(ctx, "h", "B", longTTL); err == nil && !ok {
			return fmt.Errorf("h still held by %q until %v", lb.Owner, lb.Expires)
		}
		return err
	})
	if lb.Token <= la.Token {
		t.Fatalf("B's token %d is not above A's %d", lb.Token, la.Token)
	}
	p.restore()
	var err error
	testwait.Until(t, func() error {
		if err = write(); errors.Is(err, persistence.ErrUnavailable) {
			return err
		}
		return nil
	})
	if !errors.Is(err, persistence.ErrFenced) {
		t.Fatalf("A's Write once reconnected: %v, want ErrFenced", err)
	}
	checkOwnerA(t, b, "after A's refused Write")
	if err := b.Write(ctx, persistence.Change{Handler: ownedBy("B"), Fence: lb.Fence()}); err != nil {
		t.Fatalf("B's fenced Write: %v", err)
	}
}

// TestLeaseTablesAddedToExistingDatabase: a database of the first schema
// (no lease tables), with a handler in it, gets the lease tables when
// this wfd opens it, and keeps its data.
func TestLeaseTablesAddedToExistingDatabase(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	s := openShared(t, url, postgres.Options{})
	if err := s.Write(ctx, persistence.Change{Handler: ownedBy("old")}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	_ = s.Close()
	// Back to the first schema, as an older wfd left it (every Down
	// section runs).
	if err := postgres.MigrateDownTo(ctx, url, 1); err != nil {
		t.Fatalf("migrating down to the first schema: %v", err)
	}
	if _, err := connect(t, url).Exec(ctx, `SELECT 1 FROM wfd_leases`); err == nil {
		t.Fatal("wfd_leases still there after migrating down")
	}
	s = openShared(t, url, postgres.Options{})
	l := acquireA(t, s, longTTL)
	if err := s.Write(ctx, persistence.Change{Handler: ownedBy("A"), Fence: l.Fence()}); err != nil {
		t.Fatalf("fenced Write after the upgrade: %v", err)
	}
	checkOwnerA(t, s, "after the upgrade and a fenced Write")
}
