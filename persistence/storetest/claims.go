package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

var claimerTests = []replicaTest{
	{"ClaimDue", testClaimDue},
	{"ClaimDueConcurrent", testClaimDueConcurrent},
	{"ClaimOrphans", testClaimOrphans},
}

// dueAt returns a released running handler with one timer, due at due.
func dueAt(id string, due time.Time) persistence.Handler {
	h := leasedHandler(id)
	h.Waiters[0].Deadline = due
	return h
}

// claimDue claims for replica up to limit handlers due before before, and
// returns the leases and their handlers, sorted.
func claimDue(t *testing.T, s leaser, replica string, before time.Time, limit int) ([]persistence.Lease, []string) {
	t.Helper()
	ls, err := s.ClaimDue(t.Context(), replica, before, limit, longTTL)
	return ls, claimed(t, replica, ls, err)
}

// claimOrphans claims for replica up to 10 orphans and returns their
// handlers, sorted.
func claimOrphans(t *testing.T, s leaser, replica string) []string {
	t.Helper()
	ls, err := s.ClaimOrphans(t.Context(), replica, 10, longTTL)
	return claimed(t, replica, ls, err)
}

// claimed checks the leases a claim of replica returned (its, live, with
// a token) and returns their handlers, sorted.
func claimed(t *testing.T, replica string, ls []persistence.Lease, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatalf("%s's claim: %v", replica, err)
	}
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

// testClaimDue: a claim takes the handlers with due timers, earliest
// first, whose lease is free, released or expired (or that never had
// one), with a token above every earlier one; a live lease of another
// replica, a timer not yet due and a finished handler are left alone; the
// claimed leases fence Writes as acquired ones do.
func testClaimDue(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a, b := twoReplicas(t, replicas)
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	done := dueAt("done", base)
	done.Status = persistence.StatusCompleted
	done.CompletedAt = base
	writeHandlers(t, a, dueAt("d1", base.Add(time.Second)), dueAt("d2", base.Add(2*time.Second)), dueAt("d3", base.Add(3*time.Second)),
		dueAt("held", base), dueAt("expired", base.Add(4*time.Second)), dueAt("released", base.Add(5*time.Second)),
		dueAt("later", base.Add(time.Hour)), done)
	lheld := acquire(t, b, "held", "B", longTTL)
	lexp := acquire(t, b, "expired", "B", shortTTL)
	lrel := acquire(t, b, "released", "B", longTTL)
	release(t, b, lrel)
	expire(t, a, "expired")

	before := base.Add(time.Minute)
	if _, ids := claimDue(t, a, "A", before, 2); !slices.Equal(ids, []string{"d1", "d2"}) {
		t.Fatalf("first claim (limit 2) = %v, want the two earliest due not held: [d1 d2]", ids)
	}
	got, ids := claimDue(t, a, "A", before, 10)
	if !slices.Equal(ids, []string{"d3", "expired", "released"}) {
		t.Fatalf("second claim = %v, want [d3 expired released]", ids)
	}
	earlier := map[string]uint64{"expired": lexp.Token, "released": lrel.Token}
	for _, l := range got {
		checkAbove(t, l, earlier[l.Handler])
	}
	d3 := got[slices.IndexFunc(got, func(l persistence.Lease) bool { return l.Handler == "d3" })]
	write(t, a, persistence.Change{Handler: owned("d3", "A"), Fence: d3.Fence()})
	if _, ids := claimDue(t, b, "B", before, 10); len(ids) != 0 {
		t.Fatalf("B's claim after A's = %v; want nothing (A holds them)", ids)
	}
	checkLease(t, a, "held", "B", lheld.Token)
	for _, id := range []string{"later", "done"} {
		if _, err := a.Lease(ctx, id); !errors.Is(err, persistence.ErrNotFound) {
			t.Fatalf("%s: %v, want no lease", id, err)
		}
	}
}

// testClaimDueConcurrent: claimers in several stores claim the same 200
// due handlers at once, a few at a time, until none is left: each handler
// is claimed exactly once.
func testClaimDueConcurrent(t *testing.T, replicas ReplicasFunc) {
	const (
		stores   = 4
		handlers = 200
	)
	ss := openReplicas[leaser](t, replicas, stores)
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var hs []persistence.Handler
	for i := range handlers {
		hs = append(hs, dueAt(fmt.Sprintf("h%03d", i), base))
	}
	writeHandlers(t, ss[0], hs...)
	var (
		mu      sync.Mutex
		claims  = map[string][]string{}
		wg      sync.WaitGroup
		start   = make(chan struct{})
		claimer = func(s leaser, replica string) {
			<-start
			for {
				ls, err := s.ClaimDue(context.Background(), replica, base, 7, longTTL)
				if err != nil {
					t.Errorf("%s: ClaimDue: %v", replica, err)
					return
				}
				mu.Lock()
				for _, l := range ls {
					claims[l.Handler] = append(claims[l.Handler], replica)
				}
				mu.Unlock()
				if len(ls) == 0 {
					return
				}
			}
		}
	)
	for i := range stores * 2 {
		wg.Go(func() { claimer(ss[i%stores], fmt.Sprintf("r%d", i)) })
	}
	close(start)
	wg.Wait()
	if len(claims) != handlers {
		t.Errorf("%d handlers claimed, want %d", len(claims), handlers)
	}
	for _, id := range slices.Sorted(maps.Keys(claims)) {
		if rs := claims[id]; len(rs) != 1 {
			t.Errorf("%s claimed by %v, want exactly one", id, rs)
		} else if l, err := ss[0].Lease(t.Context(), id); err != nil || l.Owner != rs[0] {
			t.Errorf("%s: lease %+v, %v; want %s's", id, l, err, rs[0])
		}
	}
}

// testClaimOrphans: the handlers some replica had in memory and nobody
// holds now are claimed; live leases, the claimer's own expired leases
// (its start-up recovers them), released and finished handlers are not.
func testClaimOrphans(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a, b := twoReplicas(t, replicas)
	active := func(id string) persistence.Handler {
		h := leasedHandler(id)
		h.Residency, h.Owner = persistence.ResidencyActive, "B"
		return h
	}
	done := active("done")
	done.Status, done.CompletedAt = persistence.StatusFailed, done.CreatedAt
	writeHandlers(t, a, active("nolease"), active("expired"), active("live"), active("mine"), active("left"), leasedHandler("released"), done)
	for _, id := range []string{"expired", "left"} {
		acquire(t, b, id, "B", shortTTL)
	}
	acquire(t, b, "live", "B", longTTL)
	acquire(t, a, "mine", "A", shortTTL)
	if err := b.Leave(ctx, "B"); err != nil { // frees "left" (and "live", taken again below)
		t.Fatal(err)
	}
	acquire(t, b, "live", "B", longTTL)
	for _, id := range []string{"expired", "mine"} {
		expire(t, a, id)
	}
	if ids := claimOrphans(t, a, "A"); !slices.Equal(ids, []string{"expired", "left", "nolease"}) {
		t.Fatalf("claimed %v, want [expired left nolease]", ids)
	}
	if ids := claimOrphans(t, b, "B"); !slices.Equal(ids, []string{"mine"}) {
		t.Fatalf("B's claim = %v; want [mine] (A's expired lease; the rest is held)", ids)
	}
	if ids := claimOrphans(t, a, "A"); len(ids) != 0 {
		t.Fatalf("A's second claim = %v; want nothing", ids)
	}
}
