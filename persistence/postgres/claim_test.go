package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// dueAt returns a released running handler with one timer, due at due.
func dueAt(id string, due time.Time) persistence.Handler {
	h := testHandler(id)
	h.Waiters[0].Deadline = due
	return h
}

func mustWrite(t *testing.T, s *postgres.Store, hs ...persistence.Handler) {
	t.Helper()
	cs := make([]persistence.Change, len(hs))
	for i, h := range hs {
		cs[i] = persistence.Change{Handler: h}
	}
	if err := s.Write(t.Context(), cs...); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

// claimedIDs returns the handlers of the leases replica A claimed,
// sorted, and checks that each is A's, live, with a token.
func claimedIDs(t *testing.T, ls []persistence.Lease) []string {
	t.Helper()
	var ids []string
	for _, l := range ls {
		if l.Owner != "A" || !l.Live || l.Token == 0 {
			t.Errorf("claimed lease %+v, want A's, live, with a token", l)
		}
		ids = append(ids, l.Handler)
	}
	slices.Sort(ids)
	return ids
}

// TestClaimSkipsLocked: a claim does not wait for a handler another
// transaction has locked (a concurrent claim, a Write): it skips it and
// claims the others.
func TestClaimSkipsLocked(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a := openShared(t, url, postgres.Options{})
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	mustWrite(t, a, dueAt("h1", base), dueAt("h2", base.Add(time.Second)))
	conn := connect(t, url)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `SELECT id FROM wfd_handlers WHERE id = 'h1' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	// Without SKIP LOCKED the claim would wait for tx: a deadline says so.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	got, err := a.ClaimDue(cctx, "A", base.Add(time.Minute), 10, longTTL)
	if err != nil {
		t.Fatalf("ClaimDue with h1 locked elsewhere: %v", err)
	}
	if ids := claimedIDs(t, got); !slices.Equal(ids, []string{"h2"}) {
		t.Fatalf("claimed %v, want [h2] (h1 is locked)", ids)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	got, err = a.ClaimDue(ctx, "A", base.Add(time.Minute), 10, longTTL)
	if ids := claimedIDs(t, got); err != nil || !slices.Equal(ids, []string{"h1"}) {
		t.Fatalf("claim after the lock went = %v, %v; want [h1]", ids, err)
	}
}

// TestLeaseTokensAboveOlderOnes: a database migrated before the token
// sequence (00003) had per-handler tokens; the sequence starts above
// them, so a handler deleted and started again under the same id after
// the upgrade still gets a greater token.
func TestLeaseTokensAboveOlderOnes(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	s := openShared(t, url, postgres.Options{})
	acquireA(t, s, longTTL)
	mustWrite(t, s, testHandler("h"))
	_ = s.Close()
	if err := postgres.MigrateDownTo(ctx, url, 2); err != nil {
		t.Fatalf("migrating down to the schema before the sequence: %v", err)
	}
	if _, err := connect(t, url).Exec(ctx, `UPDATE wfd_leases SET token = 1000 WHERE handler_id = 'h'`); err != nil {
		t.Fatal(err)
	}
	s = openShared(t, url, postgres.Options{})
	if err := s.Write(ctx, persistence.Change{Handler: persistence.Handler{ID: "h"}, Delete: true}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if l := acquireA(t, s, longTTL); l.Token <= 1000 {
		t.Fatalf("token after the upgrade and the delete %d, want above 1000", l.Token)
	}
}
