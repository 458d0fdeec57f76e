package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// notice is one handler FollowCommits reported.
type notice struct{ replica, handler, parent string }

// follower runs FollowCommits on s and collects what it reports.
type follower struct {
	commits chan notice
	resyncs chan struct{}
}

func follow(t *testing.T, s *postgres.Store) *follower {
	t.Helper()
	f := &follower{commits: make(chan notice, 1024), resyncs: make(chan struct{}, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.FollowCommits(ctx,
			func(replica, handler, parent string) { f.commits <- notice{replica, handler, parent} },
			func() { f.resyncs <- struct{}{} })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("FollowCommits: %v", err)
		}
	})
	f.resynced(t)
	return f
}

// resynced waits for the next resync.
func (f *follower) resynced(t *testing.T) {
	t.Helper()
	select {
	case <-f.resyncs:
	case <-time.After(testwait.Timeout):
		t.Fatal("no resync")
	}
}

// next is the next reported handler.
func (f *follower) next(t *testing.T) notice {
	t.Helper()
	select {
	case n := <-f.commits:
		return n
	case <-time.After(testwait.Timeout):
		t.Fatal("no commit reported")
		return notice{}
	}
}

func record(seq uint64) []persistence.Record {
	return []persistence.Record{{Seq: seq, Data: []byte("r")}}
}

// TestCommitFeed checks the commit feed's semantics: a shared store's
// Write that commits records notifies their handlers, in commit order, to
// every follower (of this store or another on the database); a Write that
// commits no record, is refused, or is made by a store that is not shared
// notifies nothing (the next notification is the next committed Write's);
// a child's end names its parent; a fenced change names its replica.
func TestCommitFeed(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})
	fa, fb := follow(t, a), follow(t, b)
	ctx := t.Context()
	expect := func(want ...notice) {
		t.Helper()
		for _, f := range []*follower{fa, fb} {
			for _, w := range want {
				if got := f.next(t); got != w {
					t.Fatalf("reported %+v, want %+v", got, w)
				}
			}
		}
	}

	h1 := testHandler("h1")
	if err := a.Write(ctx, persistence.Change{Handler: h1, Create: true, Records: record(1)}); err != nil {
		t.Fatal(err)
	}
	expect(notice{handler: "h1"})

	// Nothing committed: a refused Write (the handler exists), a Write
	// without records, a Write by a store that is not shared.
	if err := b.Write(ctx, persistence.Change{Handler: h1, Create: true, Records: record(2)}); !errors.Is(err, persistence.ErrExists) {
		t.Fatalf("Write of an existing handler = %v, want ErrExists", err)
	}
	if err := a.Write(ctx, persistence.Change{Handler: h1, Records: record(1)}); !errors.Is(err, persistence.ErrConflict) {
		t.Fatalf("Write of a record seq again = %v, want ErrConflict", err)
	}
	h1.Residency = persistence.ResidencyActive
	if err := a.Write(ctx, persistence.Change{Handler: h1}); err != nil {
		t.Fatal(err)
	}
	alone, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := alone.Write(ctx, persistence.Change{Handler: testHandler("solo"), Records: record(1)}); err != nil {
		t.Fatal(err)
	}
	if err := alone.FollowCommits(ctx, func(string, string, string) {}, func() {}); !errors.Is(err, persistence.ErrInvalid) {
		t.Errorf("FollowCommits on a store that is not shared = %v, want ErrInvalid", err)
	}
	_ = alone.Close()

	// A child ending names its parent; its records before did not.
	child := testHandler("c1")
	child.Parent = "p1"
	if err := b.Write(ctx, persistence.Change{Handler: child, Records: record(1)}, persistence.Change{Handler: testHandler("h2"), Records: record(1)}); err != nil {
		t.Fatal(err)
	}
	expect(notice{handler: "c1"}, notice{handler: "h2"})
	child.Status = persistence.StatusCompleted
	if err := a.Write(ctx, persistence.Change{Handler: child, Records: record(2)}); err != nil {
		t.Fatal(err)
	}
	expect(notice{handler: "c1", parent: "p1"})

	// A fenced change names the replica holding the lease.
	lease, ok, err := a.Acquire(ctx, "h2", "r1", time.Minute)
	if err != nil || !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	if err := a.Write(ctx, persistence.Change{Handler: testHandler("h2"), Records: record(2),
		Fence: persistence.Fence{Replica: "r1", Token: lease.Token}}); err != nil {
		t.Fatal(err)
	}
	expect(notice{replica: "r1", handler: "h2"})
}

// TestCommitFeedLarge checks that a Write of more handlers than one
// notification can name reports each of them once.
func TestCommitFeedLarge(t *testing.T) {
	s := openShared(t, pgtest.NewDatabase(t), postgres.Options{})
	f := follow(t, s)
	var changes []persistence.Change
	want := map[string]bool{}
	for i := range 200 {
		id := fmt.Sprintf("%s-%03d", strings.Repeat("x", 200), i)
		want[id] = true
		changes = append(changes, persistence.Change{Handler: testHandler(id), Records: record(1)})
	}
	if err := s.Write(t.Context(), changes...); err != nil {
		t.Fatal(err)
	}
	for len(want) > 0 {
		n := f.next(t)
		if !want[n.handler] {
			t.Fatalf("reported %q unexpectedly (again?)", n.handler)
		}
		delete(want, n.handler)
	}
}

// TestCommitFeedReconnects checks that a follower whose connection is
// lost connects again and says so (resync), then reports commits again.
func TestCommitFeedReconnects(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openShared(t, url, postgres.Options{})
	f := follow(t, s)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	var killed int
	err = conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN wfd_commits' AND pid <> pg_backend_pid()`).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminating the listener: %d, %v", killed, err)
	}
	f.resynced(t)
	if err := s.Write(t.Context(), persistence.Change{Handler: testHandler("h1"), Records: record(1)}); err != nil {
		t.Fatal(err)
	}
	if n := f.next(t); n.handler != "h1" {
		t.Fatalf("reported %+v after reconnecting, want h1", n)
	}
}
