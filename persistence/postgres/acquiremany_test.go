package postgres_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestAcquireMany: one call takes the free, released, expired and own
// leases of a list (duplicates once), leaves those another replica holds,
// and gives every lease it takes a token above the handler's earlier
// ones; replicas racing over overlapping lists each get disjoint sets.
func TestAcquireMany(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})
	held := mustAcquire(t, a, "held", "A", longTTL)
	expired := mustAcquire(t, a, "expired", "A", shortTTL)
	freed := mustAcquire(t, a, "freed", "A", longTTL)
	if err := a.Release(ctx, "freed", freed.Fence()); err != nil {
		t.Fatal(err)
	}
	expire(t, a, "expired")
	own := mustAcquire(t, b, "own", "B", longTTL)

	got, others, err := b.AcquireMany(ctx, []string{"new", "held", "expired", "freed", "own", "new"}, "B", longTTL)
	if err != nil {
		t.Fatal(err)
	}
	if len(others) != 1 || others[0].Handler != "held" || others[0].Owner != "A" || others[0].Token != held.Token || !others[0].Live {
		t.Fatalf("held elsewhere = %+v, want A's lease of held", others)
	}
	var ids []string
	before := map[string]uint64{"expired": expired.Token, "freed": freed.Token, "own": own.Token}
	for _, l := range got {
		ids = append(ids, l.Handler)
		if l.Owner != "B" || !l.Live || l.Token <= before[l.Handler] {
			t.Errorf("lease %+v, want B's, live, token above %d", l, before[l.Handler])
		}
	}
	if fmt.Sprint(ids) != "[expired freed new own]" {
		t.Fatalf("acquired %v, want [expired freed new own] (held is A's)", ids)
	}
	if l, err := b.Lease(ctx, "held"); err != nil || l.Owner != "A" || l.Token != held.Token {
		t.Fatalf("held after B's AcquireMany = %+v, %v; want A's, unchanged", l, err)
	}
	if got, others, err := b.AcquireMany(ctx, nil, "B", longTTL); err != nil || len(got)+len(others) != 0 {
		t.Fatalf("AcquireMany of nothing = %v, %v, %v", got, others, err)
	}

	// Four replicas race over overlapping lists of 60 handlers.
	stores := []*postgres.Store{a, b, openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})}
	winners := map[string][]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, s := range stores {
		for j := range 4 {
			wg.Go(func() {
				var list []string
				for k := range 60 {
					if (k+i+j)%3 != 0 {
						list = append(list, fmt.Sprintf("race%02d", k))
					}
				}
				replica := fmt.Sprintf("R%d", i)
				got, _, err := s.AcquireMany(ctx, list, replica, longTTL)
				if err != nil {
					t.Errorf("%s: %v", replica, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, l := range got {
					if w := winners[l.Handler]; len(w) == 0 || w[len(w)-1] != replica {
						winners[l.Handler] = append(winners[l.Handler], replica)
					}
				}
			})
		}
	}
	wg.Wait()
	for id, w := range winners {
		if len(w) != 1 {
			t.Errorf("%s acquired by %v, want exactly one replica", id, w)
		}
	}
	if len(winners) != 60 {
		t.Errorf("%d handlers acquired, want 60", len(winners))
	}
	var _ persistence.Leaser = a
}
