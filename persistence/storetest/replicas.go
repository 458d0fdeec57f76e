package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
)

// ReplicasFunc returns an OpenFunc whose stores all share one new, empty
// storage, as the replicas of one deployment share a database: what one
// store writes, the others read. The suites open two or more stores of
// one call, each as a replica. As with OpenFunc, the suite closes the
// stores when the test ends.
type ReplicasFunc func(t *testing.T) OpenFunc

// RunReplicas runs the suites of what the stores of several replicas
// share besides persistence.Store: persistence.Leaser (with Claimer) and
// persistence.WorkerRoutes, on the stores replicas opens. A suite whose
// interface the store does not implement is skipped (bbolt's store, one
// process's, implements neither).
//
// Every lease expires by the storage's clock; the suites wait for the
// short leases they take (a fraction of a second) to expire.
func RunReplicas(t *testing.T, replicas ReplicasFunc) {
	t.Helper()
	suites := []struct {
		name  string
		check func(s persistence.Store) bool
		needs string // what check checks
		tests []replicaTest
	}{
		{"Leaser", implements[leaser], "persistence.Leaser", leaserTests},
		// Claims are tested with the leases they take: Leaser includes
		// Claimer.
		{"Claimer", implements[leaser], "persistence.Leaser (with Claimer)", claimerTests},
		{"WorkerRoutes", implements[router], "persistence.WorkerRoutes and persistence.Leaser", workerRouteTests},
		{"Slots", implements[leaser], "persistence.Leaser (a store replicas share)", []replicaTest{{"AcrossReplicas", testSlotsAcrossReplicas}}},
	}
	for _, suite := range suites {
		t.Run(suite.name, func(t *testing.T) {
			t.Parallel()
			if s := openStore(t, replicas(t)); !suite.check(s) {
				t.Skipf("%T does not implement %s", s, suite.needs)
			}
			for _, tt := range suite.tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.fn(t, replicas)
				})
			}
		})
	}
}

type replicaTest struct {
	name string
	fn   func(t *testing.T, replicas ReplicasFunc)
}

// leaser is a store with leases: persistence.Leaser includes
// persistence.Claimer, whose suite takes and releases leases too.
type leaser interface {
	persistence.Store
	persistence.Leaser
}

// router is a store with leases and worker routes: routes last as long as
// a replica's registration (Leaser.Heartbeat).
type router interface {
	leaser
	persistence.WorkerRoutes
}

func implements[T persistence.Store](s persistence.Store) bool {
	_, ok := s.(T)
	return ok
}

// openReplicas opens n stores of one new storage, each one replica's.
func openReplicas[T persistence.Store](t *testing.T, replicas ReplicasFunc, n int) []T {
	t.Helper()
	open := replicas(t)
	out := make([]T, n)
	for i := range out {
		s := openStore(t, open)
		r, ok := s.(T)
		if !ok {
			t.Fatalf("%T does not implement %T", s, (*T)(nil))
		}
		out[i] = r
	}
	return out
}

// twoReplicas opens the stores of two replicas, A and B, of one storage.
func twoReplicas(t *testing.T, replicas ReplicasFunc) (a, b leaser) {
	t.Helper()
	rs := openReplicas[leaser](t, replicas, 2)
	return rs[0], rs[1]
}

// Lease durations of the suites: long enough never to expire during a
// test, short enough to expire soon after it is set (tests then poll for
// the expiry, measured by the storage's clock).
const (
	longTTL  = time.Hour
	shortTTL = 200 * time.Millisecond
)

// leasedHandler returns a released, idle, running handler with a waiter
// due in an hour, as a replica that let go of it leaves it.
func leasedHandler(id string) persistence.Handler {
	h := newHandler(id, "wf")
	h.Residency, h.Owner, h.IdleSince = persistence.ResidencyReleased, "", h.CreatedAt
	h.Waiters = []persistence.Waiter{{ID: "w", Key: "answer", Deadline: h.CreatedAt.Add(time.Hour)}}
	return h
}

// owned returns a handler replica owner writes under its lease.
func owned(id, owner string) persistence.Handler {
	h := leasedHandler(id)
	h.Owner = owner
	return h
}

// writeHandlers writes hs, one change each, in one Write.
func writeHandlers(t *testing.T, s persistence.Store, hs ...persistence.Handler) {
	t.Helper()
	cs := make([]persistence.Change, len(hs))
	for i, h := range hs {
		cs[i] = persistence.Change{Handler: h}
	}
	write(t, s, cs...)
}

// acquire takes handler's lease for replica, which must succeed.
func acquire(t *testing.T, s leaser, handler, replica string, ttl time.Duration) persistence.Lease {
	t.Helper()
	l, ok, err := s.Acquire(t.Context(), handler, replica, ttl)
	if err != nil || !ok {
		t.Fatalf("%s: Acquire(%q) = %+v, %v, %v; want acquired", replica, handler, l, ok, err)
	}
	if l.Owner != replica || l.Handler != handler || !l.Live || l.Token == 0 {
		t.Fatalf("%s: Acquire(%q) = %+v", replica, handler, l)
	}
	return l
}

// release frees l, which must still hold its handler.
func release(t *testing.T, s leaser, l persistence.Lease) {
	t.Helper()
	if err := s.Release(t.Context(), l.Handler, l.Fence()); err != nil {
		t.Fatalf("Release(%q): %v", l.Handler, err)
	}
}

// waitAcquire polls until replica acquires handler (its holder's lease
// expires, by the storage's clock).
func waitAcquire(t *testing.T, s leaser, handler, replica string) persistence.Lease {
	t.Helper()
	var l persistence.Lease
	testwait.Until(t, func() error {
		var (
			ok  bool
			err error
		)
		l, ok, err = s.Acquire(t.Context(), handler, replica, longTTL)
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("%s: %q still held by %q until %v", replica, handler, l.Owner, l.Expires)
		}
		return nil
	})
	return l
}

// expire waits until handler's lease has expired by the storage's clock.
func expire(t *testing.T, s leaser, handler string) {
	t.Helper()
	testwait.For(t, handler+"'s lease to expire", func() bool {
		l, err := s.Lease(t.Context(), handler)
		return err == nil && !l.Live
	})
}

// checkLease fails the test unless handler's lease is held by owner
// ("": by nobody) with token.
func checkLease(t *testing.T, s leaser, handler, owner string, token uint64) {
	t.Helper()
	l, err := s.Lease(t.Context(), handler)
	if err != nil || l.Owner != owner || l.Token != token || l.Live != (owner != "") {
		t.Fatalf("Lease(%q) = %+v, %v; want owner %q, token %d, live %v", handler, l, err, owner, token, owner != "")
	}
}

// checkAbove fails the test unless lease l's token is above before's.
func checkAbove(t *testing.T, l persistence.Lease, before uint64) {
	t.Helper()
	if l.Token <= before {
		t.Fatalf("%s's token for %q is %d, not above %d", l.Owner, l.Handler, l.Token, before)
	}
}

// renew renews held for replica and returns the handlers it lost, sorted.
func renew(t *testing.T, s leaser, replica string, ttl time.Duration, held ...persistence.Fence) []string {
	t.Helper()
	lost, err := s.Renew(t.Context(), replica, held, ttl)
	if err != nil {
		t.Fatalf("%s: Renew(%v): %v", replica, held, err)
	}
	slices.Sort(lost)
	return lost
}
