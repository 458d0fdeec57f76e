package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestLostCommitAnswerAcrossCrash: the database crashes while a Write's
// COMMIT runs, before any of the transaction's WAL reached the disk. After
// recovery its transaction id is unused, and the database hands it to the
// next transaction, which commits: txid_status of the Write's id then says
// "committed" though the Write left nothing. The store must not take that
// for its own commit (a write reported durable that is not: an
// acknowledged answer lost); the outcome is unknown, ErrUnavailable.
func TestLostCommitAnswerAcrossCrash(t *testing.T) {
	c := pgtest.StartCluster(t)
	// Nothing may flush the Write's WAL before the crash but its COMMIT,
	// which the crash comes before: the WAL writer sleeps as long as it
	// can, the background writer writes no page (which would flush the WAL
	// up to the page's changes first), and autovacuum commits nothing.
	// They take effect at the start.
	ac := connect(t, c.AdminURL())
	for _, q := range []string{`ALTER SYSTEM SET wal_writer_delay = '10s'`, `ALTER SYSTEM SET bgwriter_lru_maxpages = 0`,
		`ALTER SYSTEM SET autovacuum = off`} {
		if _, err := ac.Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_ = ac.Close(context.Background())
	if err := c.Crash(); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	url, err := c.CreateDatabase(t.Context(), "crash")
	if err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	setup := connect(t, url)
	// The Write's COMMIT waits in a deferred trigger, so that the crash
	// comes while it runs.
	for _, q := range []string{`CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$`,
		`CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT OR UPDATE ON wfd_handlers
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`} {
		if _, err := setup.Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_ = setup.Close(context.Background())
	// Whether the crash leaves the id without WAL depends on what the
	// server flushed before it (about half the time here): the crash is
	// tried until it did, and every Write it interrupted must be unknown.
	reuses := 0
	for attempt := 0; attempt < 12 && reuses == 0; attempt++ {
		if crashWrite(t, c, s, url, fmt.Sprintf("lost-%d", attempt)) {
			reuses++
		}
	}
	if reuses == 0 {
		t.Fatal("in 12 crashes no transaction id was handed out again: the scenario did not happen")
	}
}

// crashWrite crashes the database in a Write's COMMIT, then has the next
// transactions take the Write's id; reused says whether one got it. The
// Write must leave nothing and report ErrUnavailable either way.
func crashWrite(t *testing.T, c *pgtest.Cluster, s *postgres.Store, url, id string) (reused bool) {
	t.Helper()
	admin := connect(t, url)
	done := make(chan error, 1)
	go func() { done <- s.Write(context.Background(), persistence.Change{Handler: testHandler(id)}) }()
	var txid int64
	testwait.For(t, "the Write's COMMIT runs its deferred trigger", func() bool {
		err := admin.QueryRow(t.Context(), `SELECT backend_xid::text::bigint FROM pg_stat_activity WHERE query = 'COMMIT' AND wait_event = 'PgSleep'`).Scan(&txid)
		return err == nil
	})
	_ = admin.Close(context.Background())
	if err := c.Crash(); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	// After recovery the Write's transaction id may be free again: the
	// next transactions get it, and one commits.
	other, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close(context.Background()) }()
	for range 1000 {
		var got int64
		if err := other.QueryRow(t.Context(), `SELECT txid_current() % 4294967296`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got >= txid {
			reused = got == txid
			break
		}
	}
	select {
	case err := <-done:
		_, getErr := s.GetHandler(t.Context(), id)
		if !errors.Is(getErr, persistence.ErrNotFound) {
			t.Fatalf("the crashed Write's handler: %v, want none", getErr)
		}
		if !errors.Is(err, persistence.ErrUnavailable) {
			t.Fatalf("Write across the crash (its id handed out again: %v): %v, want ErrUnavailable (outcome unknown), not success", reused, err)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("the Write did not return")
	}
	return reused
}
