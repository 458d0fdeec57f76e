package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
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

// expire waits until handler's lease, acquired for ttl, has expired by
// the database's clock.
func expire(t *testing.T, s *postgres.Store, handler string) {
	t.Helper()
	testwait.For(t, handler+"'s lease to expire", func() bool {
		l, err := s.Lease(t.Context(), handler)
		return err == nil && !l.Live
	})
}

func claimedIDs(t *testing.T, ls []persistence.Lease, replica string) []string {
	t.Helper()
	var ids []string
	for _, l := range ls {
		if l.Owner != replica || !l.Live || l.Token == 0 {
			t.Errorf("claimed lease %+v, want %s's, live, with a token", l, replica)
		}
		ids = append(ids, l.Handler)
	}
	slices.Sort(ids)
	return ids
}

// TestClaimDue: a claim takes the handlers with due timers, earliest
// first, whose lease is free, released or expired (or that never had
// one), with a token above every earlier one; a live lease of another
// replica, a timer not yet due and a finished handler are left alone; the
// claimed leases fence Writes as acquired ones do.
func TestClaimDue(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	done := dueAt("done", base)
	done.Status = persistence.StatusCompleted
	done.CompletedAt = base
	mustWrite(t, a, dueAt("d1", base.Add(time.Second)), dueAt("d2", base.Add(2*time.Second)), dueAt("d3", base.Add(3*time.Second)),
		dueAt("held", base), dueAt("expired", base.Add(4*time.Second)), dueAt("released", base.Add(5*time.Second)),
		dueAt("later", base.Add(time.Hour)), done)
	mustAcquire(t, b, "held", "B", longTTL)
	lexp := mustAcquire(t, b, "expired", "B", shortTTL)
	lrel := mustAcquire(t, b, "released", "B", longTTL)
	if err := b.Release(ctx, "released", lrel.Fence()); err != nil {
		t.Fatal(err)
	}
	expire(t, a, "expired")

	before := base.Add(time.Minute)
	got, err := a.ClaimDue(ctx, "A", before, 2, longTTL)
	if err != nil {
		t.Fatalf("ClaimDue: %v", err)
	}
	if ids := claimedIDs(t, got, "A"); !slices.Equal(ids, []string{"d1", "d2"}) {
		t.Fatalf("first claim (limit 2) = %v, want the two earliest due not held: [d1 d2]", ids)
	}
	got, err = a.ClaimDue(ctx, "A", before, 10, longTTL)
	if err != nil {
		t.Fatalf("ClaimDue: %v", err)
	}
	ids := claimedIDs(t, got, "A")
	if !slices.Equal(ids, []string{"d3", "expired", "released"}) {
		t.Fatalf("second claim = %v, want [d3 expired released]", ids)
	}
	for _, l := range got {
		if l.Handler == "expired" && l.Token <= lexp.Token || l.Handler == "released" && l.Token <= lrel.Token {
			t.Errorf("claimed %+v: token not above the earlier one", l)
		}
		if l.Handler == "d3" {
			if err := a.Write(ctx, persistence.Change{Handler: owned("d3", "A"), Fence: l.Fence()}); err != nil {
				t.Errorf("Write fenced by the claimed lease: %v", err)
			}
		}
	}
	if got, err := b.ClaimDue(ctx, "B", before, 10, longTTL); err != nil || len(got) != 0 {
		t.Fatalf("B's claim after A's = %v, %v; want nothing (A holds them)", got, err)
	}
	if l, err := a.Lease(ctx, "held"); err != nil || l.Owner != "B" {
		t.Fatalf("held: %+v, %v; want B's still", l, err)
	}
	if _, err := a.Lease(ctx, "later"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("later: %v, want no lease", err)
	}
	if _, err := a.Lease(ctx, "done"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("done: %v, want no lease", err)
	}
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
	if ids := claimedIDs(t, got, "A"); !slices.Equal(ids, []string{"h2"}) {
		t.Fatalf("claimed %v, want [h2] (h1 is locked)", ids)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	got, err = a.ClaimDue(ctx, "A", base.Add(time.Minute), 10, longTTL)
	if ids := claimedIDs(t, got, "A"); err != nil || !slices.Equal(ids, []string{"h1"}) {
		t.Fatalf("claim after the lock went = %v, %v; want [h1]", ids, err)
	}
}

// TestClaimDueConcurrent: claimers in several stores claim the same 200
// due handlers at once, a few at a time, until none is left: each handler
// is claimed exactly once.
func TestClaimDueConcurrent(t *testing.T) {
	const (
		stores   = 4
		handlers = 200
	)
	url := pgtest.NewDatabase(t)
	ss := make([]*postgres.Store, stores)
	for i := range ss {
		ss[i] = openShared(t, url, postgres.Options{MaxConns: 2})
	}
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var hs []persistence.Handler
	for i := range handlers {
		hs = append(hs, dueAt(fmt.Sprintf("h%03d", i), base))
	}
	mustWrite(t, ss[0], hs...)
	var (
		mu      sync.Mutex
		claimed = map[string][]string{}
		errs    []error
		wg      sync.WaitGroup
		start   = make(chan struct{})
	)
	for i := range stores * 2 {
		wg.Go(func() {
			replica := fmt.Sprintf("r%d", i)
			<-start
			for {
				ls, err := ss[i%stores].ClaimDue(context.Background(), replica, base, 7, longTTL)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				for _, l := range ls {
					claimed[l.Handler] = append(claimed[l.Handler], replica)
				}
				mu.Unlock()
				if err != nil || len(ls) == 0 {
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d claims failed, first: %v", len(errs), errs[0])
	}
	if len(claimed) != handlers {
		t.Errorf("%d handlers claimed, want %d", len(claimed), handlers)
	}
	for _, id := range slices.Sorted(maps.Keys(claimed)) {
		if rs := claimed[id]; len(rs) != 1 {
			t.Errorf("%s claimed by %v, want exactly one", id, rs)
		} else if l, err := ss[0].Lease(t.Context(), id); err != nil || l.Owner != rs[0] {
			t.Errorf("%s: lease %+v, %v; want %s's", id, l, err, rs[0])
		}
	}
}

// TestClaimOrphans: the handlers some replica had in memory and nobody
// holds now are claimed; live leases, the claimer's own expired leases
// (its start-up recovers them), released and finished handlers are not.
func TestClaimOrphans(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})
	active := func(id string) persistence.Handler {
		h := testHandler(id)
		h.Residency, h.Owner = persistence.ResidencyActive, "B"
		return h
	}
	done := active("done")
	done.Status, done.CompletedAt = persistence.StatusFailed, done.CreatedAt
	mustWrite(t, a, active("nolease"), active("expired"), active("live"), active("mine"), active("left"), testHandler("released"), done)
	for _, id := range []string{"expired", "left"} {
		mustAcquire(t, b, id, "B", shortTTL)
	}
	mustAcquire(t, b, "live", "B", longTTL)
	mustAcquire(t, a, "mine", "A", shortTTL)
	if err := b.Leave(ctx, "B"); err != nil { // frees "left" (and "live", taken again below)
		t.Fatal(err)
	}
	mustAcquire(t, b, "live", "B", longTTL)
	for _, id := range []string{"expired", "mine"} {
		expire(t, a, id)
	}
	got, err := a.ClaimOrphans(ctx, "A", 10, longTTL)
	if err != nil {
		t.Fatalf("ClaimOrphans: %v", err)
	}
	if ids := claimedIDs(t, got, "A"); !slices.Equal(ids, []string{"expired", "left", "nolease"}) {
		t.Fatalf("claimed %v, want [expired left nolease]", ids)
	}
	if got, err := a.ClaimOrphans(ctx, "A", 10, longTTL); err != nil || len(got) != 0 {
		t.Fatalf("second claim = %v, %v; want nothing", got, err)
	}
}

// TestOwners: the live owners of the handlers asked about, in one call.
func TestOwners(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a := openShared(t, url, postgres.Options{})
	mustAcquire(t, a, "h1", "A", longTTL)
	mustAcquire(t, a, "h2", "B", longTTL)
	l3 := mustAcquire(t, a, "h3", "A", longTTL)
	if err := a.Release(ctx, "h3", l3.Fence()); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, a, "h4", "A", shortTTL)
	expire(t, a, "h4")
	got, err := a.Owners(ctx, []string{"h1", "h2", "h3", "h4", "h5"})
	if err != nil {
		t.Fatalf("Owners: %v", err)
	}
	if want := map[string]string{"h1": "A", "h2": "B"}; !maps.Equal(got, want) {
		t.Fatalf("Owners = %v, want %v", got, want)
	}
	if got, err := a.Owners(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("Owners(nil) = %v, %v", got, err)
	}
}

// TestLeaseDeletedWithHandler: deleting a handler deletes its lease row in
// the same Write; a new handler under the same id gets tokens above the
// old one's, so an old fence never passes again.
func TestLeaseDeletedWithHandler(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a := openShared(t, url, postgres.Options{})
	la := mustAcquire(t, a, "h", "A", longTTL)
	mustAcquire(t, a, "kept", "A", longTTL)
	mustWrite(t, a, testHandler("h"), testHandler("kept"))
	if err := a.Write(ctx, persistence.Change{Handler: persistence.Handler{ID: "h"}, Delete: true}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := a.Lease(ctx, "h"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("Lease after the delete: %v, want ErrNotFound", err)
	}
	if _, err := a.Lease(ctx, "kept"); err != nil {
		t.Fatalf("another handler's lease after the delete: %v", err)
	}
	lb := mustAcquire(t, a, "h", "A", longTTL)
	if lb.Token <= la.Token {
		t.Fatalf("new handler's token %d, not above the deleted one's %d", lb.Token, la.Token)
	}
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence()}); !errors.Is(err, persistence.ErrFenced) {
		t.Fatalf("Write with the deleted handler's fence: %v, want ErrFenced", err)
	}
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: lb.Fence()}); err != nil {
		t.Fatalf("Write with the new fence: %v", err)
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
	mustAcquire(t, s, "h", "A", longTTL)
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
	if l := mustAcquire(t, s, "h", "A", longTTL); l.Token <= 1000 {
		t.Fatalf("token after the upgrade and the delete %d, want above 1000", l.Token)
	}
}
