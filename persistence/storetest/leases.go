package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
)

var leaserTests = []replicaTest{
	{"Takeover", testLeaseTakeover},
	{"RenewRelease", testLeaseRenewRelease},
	{"RenewLost", testLeaseRenewLost},
	{"ConcurrentAcquire", testLeaseConcurrentAcquire},
	{"ExpiredIsLost", testLeaseExpiredIsLost},
	{"Replicas", testReplicas},
	{"Invalid", testLeaseInvalid},
	{"FreeLeaseInWrite", testFreeLeaseInWrite},
	{"AcquireMany", testAcquireMany},
	{"AcquireManyRace", testAcquireManyRace},
	{"FencingUnderRace", testLeaseFencingUnderRace},
	{"DeletedWithHandler", testLeaseDeletedWithHandler},
	{"Owners", testOwners},
}

// testLeaseTakeover: two stores as two replicas. A holds a lease, B cannot
// take it until it expires, then takes it with a higher token; A's fenced
// Writes are refused whole and change nothing, B's succeed.
func testLeaseTakeover(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a, b := twoReplicas(t, replicas)

	la := acquire(t, a, "h", "A", longTTL)
	write(t, a, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence()})
	held, ok, err := b.Acquire(ctx, "h", "B", longTTL)
	if err != nil || ok || held.Owner != "A" || held.Token != la.Token || !held.Live {
		t.Fatalf("B's Acquire of A's live lease = %+v, %v, %v; want A's lease, not acquired", held, ok, err)
	}
	checkLease(t, b, "h", "A", la.Token)

	// A shortens its lease (as if it stopped renewing): it expires soon.
	if lost := renew(t, a, "A", shortTTL, la.Fence()); len(lost) != 0 {
		t.Fatalf("Renew lost %v; want nothing lost", lost)
	}
	lb := waitAcquire(t, b, "h", "B")
	checkAbove(t, lb, la.Token)
	checkFencedOut(t, a, b, la)

	write(t, b, persistence.Change{Handler: owned("h", "B"), Fence: lb.Fence()})
	if got := getHandler(t, a, "h").Owner; got != "B" {
		t.Fatalf("after B's Write, owner %q, want B", got)
	}
	if lost := renew(t, a, "A", longTTL, la.Fence()); !slices.Equal(lost, []string{"h"}) {
		t.Fatalf("A's Renew after the takeover lost %v; want [h]", lost)
	}
	wantErr(t, "A's Release after the takeover", a.Release(ctx, "h", la.Fence()), persistence.ErrFenced)
	checkLease(t, a, "h", "B", lb.Token)
}

// checkFencedOut checks that a Write of a under its lease la, which
// another replica took over, is refused whole (ErrFenced, an ErrConflict)
// and changes nothing, as b reads.
func checkFencedOut(t *testing.T, a, b leaser, la persistence.Lease) {
	t.Helper()
	ctx := t.Context()
	// A's Write, with a change of another handler in it: refused whole.
	err := a.Write(ctx,
		persistence.Change{Handler: owned("other", "A"), Create: true},
		persistence.Change{Handler: owned(la.Handler, "A-late"), Fence: la.Fence(), Records: records(1)})
	if !errors.Is(err, persistence.ErrFenced) || !errors.Is(err, persistence.ErrConflict) {
		t.Fatalf("A's Write after the takeover: %v, want ErrFenced (an ErrConflict)", err)
	}
	if got := getHandler(t, b, la.Handler).Owner; got != "A" {
		t.Fatalf("after A's refused Write, owner %q, want A (unchanged)", got)
	}
	if recs, err := b.ReadRecords(ctx, la.Handler, 0, 10); err != nil || len(recs) != 0 {
		t.Fatalf("after A's refused Write, records %v, %v; want none", recs, err)
	}
	if _, err := b.GetHandler(ctx, "other"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("the refused Write's other change: %v, want ErrNotFound", err)
	}
}

// testLeaseRenewRelease: Renew extends what a replica still holds; Release
// frees a lease for anyone at once; acquiring again fences the earlier
// token.
func testLeaseRenewRelease(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a, b := twoReplicas(t, replicas)
	l1 := acquire(t, a, "h1", "A", longTTL)
	l2 := acquire(t, a, "h2", "A", longTTL)
	write(t, a, persistence.Change{Handler: owned("h1", "A"), Create: true, Fence: l1.Fence()})

	if lost := renew(t, a, "A", 2*longTTL, l1.Fence(), l2.Fence()); len(lost) != 0 {
		t.Fatalf("Renew lost %v; want nothing lost", lost)
	}
	if l, err := a.Lease(ctx, "h1"); err != nil || !l.Expires.After(l1.Expires) || l.Token != l1.Token {
		t.Fatalf("after Renew, Lease(h1) = %+v, %v; want a later expiry than %v, same token", l, err, l1.Expires)
	}

	release(t, a, l2)
	checkLease(t, b, "h2", "", l2.Token) // no owner, not live, token kept
	wantErr(t, "second Release", a.Release(ctx, "h2", l2.Fence()), persistence.ErrFenced)
	checkAbove(t, acquire(t, b, "h2", "B", longTTL), l2.Token)

	// A acquires h1 again: a new token, the old one is fenced.
	l1b := acquire(t, a, "h1", "A", longTTL)
	checkAbove(t, l1b, l1.Token)
	wantErr(t, "Write with the token before re-acquiring", a.Write(ctx, persistence.Change{Handler: owned("h1", "A"), Fence: l1.Fence()}), persistence.ErrFenced)
	write(t, a, persistence.Change{Handler: owned("h1", "A"), Fence: l1b.Fence()})
}

// testLeaseRenewLost: Renew reports the leases a replica no longer holds:
// released and taken by another replica, held with an older token, never
// taken, or another replica's.
func testLeaseRenewLost(t *testing.T, replicas ReplicasFunc) {
	a, b := twoReplicas(t, replicas)
	l1 := acquire(t, a, "h1", "A", longTTL)
	l2 := acquire(t, a, "h2", "A", longTTL)
	l3 := acquire(t, a, "h3", "A", longTTL)
	release(t, a, l2)
	acquire(t, b, "h2", "B", longTTL)
	l1b := acquire(t, a, "h1", "A", longTTL)
	for _, c := range []struct {
		name string
		held []persistence.Fence
		lost []string
	}{
		{"all still held", []persistence.Fence{l1b.Fence(), l3.Fence()}, nil},
		{"released, then taken by B", []persistence.Fence{l2.Fence(), l3.Fence()}, []string{"h2"}},
		{"an old token", []persistence.Fence{l1.Fence(), l3.Fence()}, []string{"h1"}},
		{"never leased", []persistence.Fence{{Handler: "hx", Replica: "A", Token: 1}}, []string{"hx"}},
		{"another replica's", []persistence.Fence{{Handler: "h3", Replica: "B", Token: l3.Token}}, []string{"h3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := map[string]leaser{"A": a, "B": b}[c.held[0].Replica]
			if lost := renew(t, s, c.held[0].Replica, longTTL, c.held...); !slices.Equal(lost, c.lost) {
				t.Fatalf("Renew lost %v; want %v", lost, c.lost)
			}
		})
	}
	checkLease(t, a, "h3", "A", l3.Token) // B's renew attempt changed nothing
}

// testLeaseConcurrentAcquire: replicas in several stores race for the
// same handlers; exactly one wins each, and the others see the winner.
func testLeaseConcurrentAcquire(t *testing.T, replicas ReplicasFunc) {
	const (
		stores   = 6
		perStore = 4
		handlers = 20
	)
	ss := openReplicas[leaser](t, replicas, stores)
	var (
		mu      sync.Mutex
		winners = map[string][]persistence.Lease{} // handler → the leases acquired
		seen    = map[string][]string{}            // handler → holders losers saw
		wg      sync.WaitGroup
		start   = make(chan struct{})
	)
	for i := range stores * perStore {
		wg.Go(func() {
			replica := fmt.Sprintf("r%02d", i)
			<-start
			for h := range handlers {
				id := fmt.Sprintf("h%02d", h)
				l, ok, err := ss[i%stores].Acquire(context.Background(), id, replica, longTTL)
				if err != nil {
					t.Errorf("%s: Acquire(%s): %v", replica, id, err)
					return
				}
				mu.Lock()
				if ok {
					winners[id] = append(winners[id], l)
				} else {
					seen[id] = append(seen[id], l.Owner)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for h := range handlers {
		id := fmt.Sprintf("h%02d", h)
		w := winners[id]
		if len(w) != 1 {
			t.Errorf("%s: acquired by %v, want exactly one", id, w)
			continue
		}
		if n := len(seen[id]); n != stores*perStore-1 || slices.ContainsFunc(seen[id], func(o string) bool { return o != w[0].Owner }) {
			t.Errorf("%s: the losers saw holders %v, want the winner %q %d times", id, seen[id], w[0].Owner, stores*perStore-1)
		}
		checkLease(t, ss[0], id, w[0].Owner, w[0].Token)
	}
}

// testLeaseExpiredIsLost: a lease that expired is its holder's no more,
// even while nobody has taken it: a fenced Write under it is refused (a
// replica paused past its lease commits nothing it did meanwhile) and
// Renew reports it lost instead of bringing it back. Acquiring it again
// gives a new token.
func testLeaseExpiredIsLost(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a := openReplicas[leaser](t, replicas, 1)[0]
	l := acquire(t, a, "h", "A", longTTL)
	write(t, a, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: l.Fence()})
	if lost := renew(t, a, "A", shortTTL, l.Fence()); len(lost) != 0 {
		t.Fatalf("Renew lost %v; want nothing lost", lost)
	}
	expire(t, a, "h")

	err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Fence: l.Fence(), Records: records(1)})
	if !errors.Is(err, persistence.ErrFenced) {
		t.Fatalf("Write under an expired lease nobody took: %v, want ErrFenced", err)
	}
	if recs, err := a.ReadRecords(ctx, "h", 0, 0); err != nil || len(recs) != 0 {
		t.Fatalf("records after the refused Write = %v, %v; want none", recs, err)
	}
	if lost := renew(t, a, "A", longTTL, l.Fence()); !slices.Equal(lost, []string{"h"}) {
		t.Fatalf("Renew of an expired lease lost %v; want [h]", lost)
	}
	again := acquire(t, a, "h", "A", longTTL)
	checkAbove(t, again, l.Token)
	write(t, a, persistence.Change{Handler: owned("h", "A"), Fence: again.Fence()})
}

// testReplicas: Heartbeat registers and renews a replica; Replicas lists
// those whose registration has not expired by the storage's clock; Leave
// unregisters one and frees its leases.
func testReplicas(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a, b := twoReplicas(t, replicas)
	ra := heartbeat(t, a, "A", "10.0.0.1:8080", longTTL)
	heartbeat(t, b, "B", "10.0.0.2:8080", longTTL)
	if got := registered(t, b); !slices.Equal(got, []string{"A@10.0.0.1:8080", "B@10.0.0.2:8080"}) {
		t.Fatalf("Replicas = %v", got)
	}
	ra2 := heartbeat(t, a, "A", "10.0.0.3:8080", longTTL)
	if !ra2.Started.Equal(ra.Started) || !ra2.Expires.After(ra.Expires) {
		t.Fatalf("second Heartbeat A = %+v; want started %v kept, a later expiry than %v", ra2, ra.Started, ra.Expires)
	}
	heartbeat(t, b, "B", "10.0.0.2:8080", shortTTL)
	waitRegistered(t, b, "B's registration to expire", "A@10.0.0.3:8080")

	// A leaves: its registration goes and its leases are free at once.
	la := acquire(t, a, "h", "A", longTTL)
	if err := a.Leave(ctx, "A"); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	if got := registered(t, b); len(got) != 0 {
		t.Fatalf("Replicas after A left = %v, want none", got)
	}
	checkAbove(t, acquire(t, b, "h", "B", longTTL), la.Token)
}

// heartbeat registers replica id at address for ttl.
func heartbeat(t *testing.T, s leaser, id, address string, ttl time.Duration) persistence.Replica {
	t.Helper()
	r, err := s.Heartbeat(t.Context(), id, address, ttl)
	if err != nil || r.ID != id || r.Address != address || !r.Live {
		t.Fatalf("Heartbeat(%s, %s) = %+v, %v", id, address, r, err)
	}
	return r
}

// registered lists the live replicas as "id@address".
func registered(t *testing.T, s leaser) []string {
	t.Helper()
	rs, err := s.Replicas(t.Context())
	if err != nil {
		t.Fatalf("Replicas: %v", err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.ID+"@"+r.Address)
	}
	return out
}

// waitRegistered waits (for what) until the live replicas are want.
func waitRegistered(t *testing.T, s leaser, what string, want ...string) {
	t.Helper()
	testwait.For(t, what, func() bool { return slices.Equal(registered(t, s), want) })
}

// testLeaseInvalid: a fence needs both a replica and a token, and the
// lease methods check their arguments.
func testLeaseInvalid(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	s := openReplicas[leaser](t, replicas, 1)[0]
	h := leasedHandler("h")
	for _, c := range []struct {
		name string
		err  error
	}{
		{"fence without token", s.Write(ctx, persistence.Change{Handler: h, Fence: persistence.Fence{Replica: "A"}})},
		{"fence without replica", s.Write(ctx, persistence.Change{Handler: h, Fence: persistence.Fence{Token: 1}})},
		{"another handler's fence", s.Write(ctx, persistence.Change{Handler: h, Fence: persistence.Fence{Handler: "g", Replica: "A", Token: 1}})},
		{"FreeLease without a fence", s.Write(ctx, persistence.Change{Handler: h, FreeLease: true})},
		{"acquire without ttl", func() error { _, _, err := s.Acquire(ctx, "h", "A", 0); return err }()},
		{"acquire without handler", func() error { _, _, err := s.Acquire(ctx, "", "A", time.Second); return err }()},
		{"heartbeat without id", func() error { _, err := s.Heartbeat(ctx, "", "x", time.Second); return err }()},
		{"renew without a handler", func() error {
			_, err := s.Renew(ctx, "A", []persistence.Fence{{Replica: "A", Token: 1}}, time.Second)
			return err
		}()},
		{"renew another replica's fence", func() error {
			_, err := s.Renew(ctx, "A", []persistence.Fence{{Handler: "h", Replica: "B", Token: 1}}, time.Second)
			return err
		}()},
	} {
		if !errors.Is(c.err, persistence.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, c.err)
		}
	}
	if err := s.Write(ctx, persistence.Change{Handler: h, Fence: persistence.Fence{Replica: "A", Token: 1}}); !errors.Is(err, persistence.ErrFenced) {
		t.Errorf("fenced Write of a handler without a lease: %v, want ErrFenced", err)
	}
}

// testFreeLeaseInWrite: a fenced change with FreeLease frees the lease in
// its own commit: the next replica acquires it at once, with a greater
// token, and the old fence writes nothing more. A refused Write frees
// nothing.
func testFreeLeaseInWrite(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a, b := twoReplicas(t, replicas)
	la := acquire(t, a, "h", "A", longTTL)
	write(t, a, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence()})
	// Refused (it creates a handler that exists): the lease stays A's.
	err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence(), FreeLease: true})
	if !errors.Is(err, persistence.ErrExists) {
		t.Fatalf("refused Write: %v, want ErrExists", err)
	}
	checkLease(t, a, "h", "A", la.Token)
	write(t, a, persistence.Change{Handler: owned("h", "A"), Fence: la.Fence(), FreeLease: true})
	checkLease(t, a, "h", "", la.Token)
	checkAbove(t, acquire(t, b, "h", "B", longTTL), la.Token)
	wantErr(t, "A's Write after freeing", a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Fence: la.Fence()}), persistence.ErrFenced)
}

// testAcquireMany: one call takes the free, released, expired and own
// leases of a list (duplicates once), leaves those another replica holds,
// and gives every lease it takes a token above the handler's earlier
// ones.
func testAcquireMany(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a, b := twoReplicas(t, replicas)
	held := acquire(t, a, "held", "A", longTTL)
	expired := acquire(t, a, "expired", "A", shortTTL)
	freed := acquire(t, a, "freed", "A", longTTL)
	release(t, a, freed)
	expire(t, a, "expired")
	own := acquire(t, b, "own", "B", longTTL)

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
	if !slices.Equal(ids, []string{"expired", "freed", "new", "own"}) {
		t.Fatalf("acquired %v, want [expired freed new own] (held is A's)", ids)
	}
	checkLease(t, b, "held", "A", held.Token)
	if got, others, err := b.AcquireMany(ctx, nil, "B", longTTL); err != nil || len(got)+len(others) != 0 {
		t.Fatalf("AcquireMany of nothing = %v, %v, %v", got, others, err)
	}
}

// testAcquireManyRace: four replicas, four callers each, race over
// overlapping lists of 60 handlers: each handler goes to one replica.
func testAcquireManyRace(t *testing.T, replicas ReplicasFunc) {
	stores := openReplicas[leaser](t, replicas, 4)
	var (
		mu      sync.Mutex
		winners = map[string][]string{} // handler → replicas that acquired it
		wg      sync.WaitGroup
	)
	for i, s := range stores {
		replica := fmt.Sprintf("R%d", i)
		for j := range 4 {
			wg.Go(func() {
				var list []string
				for k := range 60 {
					if (k+i+j)%3 != 0 {
						list = append(list, fmt.Sprintf("race%02d", k))
					}
				}
				got, _, err := s.AcquireMany(t.Context(), list, replica, longTTL)
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
}

// testLeaseFencingUnderRace: A appends records to its handler as fast as
// it can, with its fence, while B waits for A's lease to expire and takes
// it. Every Write of A that succeeded committed before B's Acquire (B
// reads all of them), and every Write after it is refused.
func testLeaseFencingUnderRace(t *testing.T, replicas ReplicasFunc) {
	a, b := twoReplicas(t, replicas)
	la := acquire(t, a, "h", "A", shortTTL)
	write(t, a, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence()})
	var (
		lastOK  uint64 // A's last acknowledged record
		aErr    error
		written = make(chan struct{}) // closed after A's first acknowledged append
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		lastOK, aErr = appendUntilFenced(a, la, written)
	}()
	<-written
	lb := waitAcquire(t, b, "h", "B")
	got := getHandler(t, b, "h")
	<-done
	if !errors.Is(aErr, persistence.ErrFenced) {
		t.Fatalf("A's Write stopped with %v, want ErrFenced", aErr)
	}
	if lastOK != got.LastSeq {
		t.Fatalf("A's last acknowledged record is %d, B read last seq %d after taking the lease: want equal", lastOK, got.LastSeq)
	}
	write(t, b, persistence.Change{Handler: owned("h", "B"), Fence: lb.Fence(),
		Records: []persistence.Record{{Seq: got.LastSeq + 1, Data: []byte("b")}}})
}

// appendUntilFenced has a append records to la's handler under la until
// a Write fails, closing written after the first that succeeds. It
// returns the last record acknowledged and the error.
func appendUntilFenced(a leaser, la persistence.Lease, written chan<- struct{}) (lastOK uint64, err error) {
	const perWrite = 200
	// Large Writes: each spends a while between its read of the lease and
	// its commit, where another replica's Acquire must wait for it.
	data := bytes.Repeat([]byte("a"), 4<<10)
	for seq := uint64(1); ; seq += perWrite {
		recs := make([]persistence.Record, perWrite)
		for i := range recs {
			recs[i] = persistence.Record{Seq: seq + uint64(i), Data: data}
		}
		err := a.Write(context.Background(), persistence.Change{Handler: owned(la.Handler, la.Owner), Fence: la.Fence(), Records: recs})
		if err != nil {
			return lastOK, err
		}
		lastOK = seq + perWrite - 1
		if seq == 1 {
			close(written)
		}
	}
}

// testLeaseDeletedWithHandler: deleting a handler deletes its lease in
// the same Write; a new handler under the same id gets tokens above the
// old one's, so an old fence never passes again.
func testLeaseDeletedWithHandler(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a := openReplicas[leaser](t, replicas, 1)[0]
	la := acquire(t, a, "h", "A", longTTL)
	lk := acquire(t, a, "kept", "A", longTTL)
	writeHandlers(t, a, leasedHandler("h"), leasedHandler("kept"))
	write(t, a, persistence.Change{Handler: persistence.Handler{ID: "h"}, Delete: true})
	if _, err := a.Lease(ctx, "h"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("Lease after the delete: %v, want ErrNotFound", err)
	}
	checkLease(t, a, "kept", "A", lk.Token)
	lb := acquire(t, a, "h", "A", longTTL)
	checkAbove(t, lb, la.Token)
	wantErr(t, "Write with the deleted handler's fence", a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence()}), persistence.ErrFenced)
	write(t, a, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: lb.Fence()})
}

// testOwners: the live owners of the handlers asked about, in one call.
func testOwners(t *testing.T, replicas ReplicasFunc) {
	ctx := t.Context()
	a := openReplicas[leaser](t, replicas, 1)[0]
	acquire(t, a, "h1", "A", longTTL)
	acquire(t, a, "h2", "B", longTTL)
	release(t, a, acquire(t, a, "h3", "A", longTTL))
	acquire(t, a, "h4", "A", shortTTL)
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
