package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

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

func mustAcquire(t *testing.T, s *postgres.Store, handler, replica string, ttl time.Duration) persistence.Lease {
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

// waitAcquire polls until replica acquires handler (its holder's lease
// expires, by the database's clock).
func waitAcquire(t *testing.T, s *postgres.Store, handler, replica string) persistence.Lease {
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

// owned returns h with Owner set, a change a replica would write.
func owned(id, owner string) persistence.Handler {
	h := testHandler(id)
	h.Owner = owner
	return h
}

func ownerOf(t *testing.T, s *postgres.Store, id string) string {
	t.Helper()
	h, err := s.GetHandler(t.Context(), id)
	if err != nil {
		t.Fatalf("GetHandler(%q): %v", id, err)
	}
	return h.Owner
}

// TestLeaseTakeover: two stores on one database as two replicas. A holds
// a lease, B cannot take it until it expires, then takes it with a higher
// token; A's fenced Writes are refused whole and change nothing, B's
// succeed.
func TestLeaseTakeover(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})

	la := mustAcquire(t, a, "h", "A", longTTL)
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence()}); err != nil {
		t.Fatalf("A's fenced create: %v", err)
	}
	held, ok, err := b.Acquire(ctx, "h", "B", longTTL)
	if err != nil || ok || held.Owner != "A" || held.Token != la.Token || !held.Live {
		t.Fatalf("B's Acquire of A's live lease = %+v, %v, %v; want A's lease, not acquired", held, ok, err)
	}
	if l, err := b.Lease(ctx, "h"); err != nil || l.Owner != "A" || l.Token != la.Token {
		t.Fatalf("Lease = %+v, %v; want A's", l, err)
	}

	// A shortens its lease (as if it stopped renewing): it expires soon.
	if lost, err := a.Renew(ctx, "A", []persistence.Fence{la.Fence()}, shortTTL); err != nil || len(lost) != 0 {
		t.Fatalf("Renew = %v, %v; want nothing lost", lost, err)
	}
	lb := waitAcquire(t, b, "h", "B")
	if lb.Token <= la.Token {
		t.Fatalf("B's token %d is not above A's %d", lb.Token, la.Token)
	}

	// A's Write, with a change of another handler in it: refused whole.
	err = a.Write(ctx,
		persistence.Change{Handler: owned("other", "A"), Create: true},
		persistence.Change{Handler: owned("h", "A-late"), Fence: la.Fence(), Records: []persistence.Record{{Seq: 1, Data: []byte("x")}}})
	if !errors.Is(err, persistence.ErrFenced) || !errors.Is(err, persistence.ErrConflict) {
		t.Fatalf("A's Write after the takeover: %v, want ErrFenced (an ErrConflict)", err)
	}
	if got := ownerOf(t, b, "h"); got != "A" {
		t.Fatalf("after A's refused Write, owner %q, want A (unchanged)", got)
	}
	if recs, err := b.ReadRecords(ctx, "h", 0, 10); err != nil || len(recs) != 0 {
		t.Fatalf("after A's refused Write, records %v, %v; want none", recs, err)
	}
	if _, err := b.GetHandler(ctx, "other"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("the refused Write's other change: %v, want ErrNotFound", err)
	}

	if err := b.Write(ctx, persistence.Change{Handler: owned("h", "B"), Fence: lb.Fence()}); err != nil {
		t.Fatalf("B's fenced Write: %v", err)
	}
	if got := ownerOf(t, a, "h"); got != "B" {
		t.Fatalf("after B's Write, owner %q, want B", got)
	}
	if lost, err := a.Renew(ctx, "A", []persistence.Fence{la.Fence()}, longTTL); err != nil || !slices.Equal(lost, []string{"h"}) {
		t.Fatalf("A's Renew after the takeover = %v, %v; want [h] lost", lost, err)
	}
	if err := a.Release(ctx, "h", la.Fence()); !errors.Is(err, persistence.ErrFenced) {
		t.Fatalf("A's Release after the takeover: %v, want ErrFenced", err)
	}
	if l, err := a.Lease(ctx, "h"); err != nil || l.Owner != "B" || l.Token != lb.Token || !l.Live {
		t.Fatalf("Lease after A's attempts = %+v, %v; want B's, untouched", l, err)
	}
}

// TestLeaseRenewRelease: Renew extends what a replica still holds and
// reports the rest; Release frees a lease for anyone at once; acquiring
// again fences the earlier token.
func TestLeaseRenewRelease(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})
	l1 := mustAcquire(t, a, "h1", "A", longTTL)
	l2 := mustAcquire(t, a, "h2", "A", longTTL)
	l3 := mustAcquire(t, a, "h3", "A", longTTL)

	if lost, err := a.Renew(ctx, "A", []persistence.Fence{l1.Fence(), l2.Fence(), l3.Fence()}, 2*longTTL); err != nil || len(lost) != 0 {
		t.Fatalf("Renew = %v, %v; want nothing lost", lost, err)
	}
	if l, err := a.Lease(ctx, "h1"); err != nil || !l.Expires.After(l1.Expires) || l.Token != l1.Token {
		t.Fatalf("after Renew, Lease(h1) = %+v, %v; want a later expiry than %v, same token", l, err, l1.Expires)
	}

	if err := a.Release(ctx, "h2", l2.Fence()); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if l, err := b.Lease(ctx, "h2"); err != nil || l.Owner != "" || l.Live || l.Token != l2.Token {
		t.Fatalf("released Lease = %+v, %v; want no owner, not live, token kept", l, err)
	}
	if err := a.Release(ctx, "h2", l2.Fence()); !errors.Is(err, persistence.ErrFenced) {
		t.Fatalf("second Release: %v, want ErrFenced", err)
	}
	if lb := mustAcquire(t, b, "h2", "B", longTTL); lb.Token <= l2.Token {
		t.Fatalf("B's token after the release %d, not above %d", lb.Token, l2.Token)
	}

	// A acquires h1 again: a new token, the old one is fenced.
	l1b := mustAcquire(t, a, "h1", "A", longTTL)
	if l1b.Token <= l1.Token {
		t.Fatalf("re-acquired token %d, not above %d", l1b.Token, l1.Token)
	}
	if err := a.Write(ctx, persistence.Change{Handler: owned("h1", "A"), Fence: l1.Fence()}); !errors.Is(err, persistence.ErrFenced) {
		t.Fatalf("Write with the token before re-acquiring: %v, want ErrFenced", err)
	}
	if err := a.Write(ctx, persistence.Change{Handler: owned("h1", "A"), Fence: l1b.Fence()}); err != nil {
		t.Fatalf("Write with the new token: %v", err)
	}

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
			replica := c.held[0].Replica
			s := a
			if replica == "B" {
				s = b
			}
			lost, err := s.Renew(ctx, replica, c.held, longTTL)
			if err != nil || !slices.Equal(lost, c.lost) {
				t.Fatalf("Renew = %v, %v; want %v lost", lost, err, c.lost)
			}
		})
	}
	if l, err := a.Lease(ctx, "h3"); err != nil || l.Owner != "A" {
		t.Fatalf("h3 after B's renew attempt: %+v, %v; want A's", l, err)
	}
}

// TestLeaseConcurrentAcquire: replicas in several stores race for the
// same handlers; exactly one wins each, and the others see the winner.
func TestLeaseConcurrentAcquire(t *testing.T) {
	const (
		stores   = 6
		perStore = 4
		handlers = 20
	)
	url := pgtest.NewDatabase(t)
	ss := make([]*postgres.Store, stores)
	for i := range ss {
		ss[i] = openShared(t, url, postgres.Options{MaxConns: perStore})
	}
	var (
		mu      sync.Mutex
		winners = map[string][]string{} // handler → replicas that acquired it
		seen    = map[string][]string{} // handler → holders losers saw
		tokens  = map[string]uint64{}   // handler → the winner's token
		errs    []error
		wg      sync.WaitGroup
		start   = make(chan struct{})
	)
	for i := range stores * perStore {
		wg.Add(1)
		go func(s *postgres.Store, replica string) {
			defer wg.Done()
			<-start
			for h := range handlers {
				id := fmt.Sprintf("h%02d", h)
				l, ok, err := s.Acquire(context.Background(), id, replica, longTTL)
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case ok:
					winners[id] = append(winners[id], replica)
					tokens[id] = l.Token
				default:
					seen[id] = append(seen[id], l.Owner)
				}
				mu.Unlock()
			}
		}(ss[i%stores], fmt.Sprintf("r%02d", i))
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d Acquires failed, first: %v", len(errs), errs[0])
	}
	for h := range handlers {
		id := fmt.Sprintf("h%02d", h)
		w := winners[id]
		if len(w) != 1 {
			t.Errorf("%s: acquired by %v, want exactly one", id, w)
			continue
		}
		if n := len(seen[id]); n != stores*perStore-1 {
			t.Errorf("%s: %d losers, want %d", id, n, stores*perStore-1)
		}
		for _, o := range seen[id] {
			if o != w[0] {
				t.Errorf("%s: a loser saw holder %q, the winner is %q", id, o, w[0])
			}
		}
		if l, err := ss[0].Lease(t.Context(), id); err != nil || l.Owner != w[0] || l.Token != tokens[id] {
			t.Errorf("%s: Lease = %+v, %v; want %s's, token %d (the winner's)", id, l, err, w[0], tokens[id])
		}
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

	la := mustAcquire(t, a, "h", "A", shortTTL)
	// Accepted even if the lease has expired already: nobody took it.
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence()}); err != nil {
		t.Fatalf("A's fenced create: %v", err)
	}
	p.cut()
	write := func() error {
		return a.Write(ctx, persistence.Change{Handler: owned("h", "A-late"), Fence: la.Fence()})
	}
	if err := write(); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("A's Write with its connection cut: %v, want ErrUnavailable", err)
	}
	lb := waitAcquire(t, b, "h", "B")
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
	if got := ownerOf(t, b, "h"); got != "A" {
		t.Fatalf("after A's refused Write, owner %q, want A (unchanged)", got)
	}
	if err := b.Write(ctx, persistence.Change{Handler: owned("h", "B"), Fence: lb.Fence()}); err != nil {
		t.Fatalf("B's fenced Write: %v", err)
	}
}

// TestReplicas: Heartbeat registers and renews a replica; Replicas lists
// those whose registration has not expired by the database's clock;
// Leave unregisters one and frees its leases.
func TestReplicas(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})
	ra, err := a.Heartbeat(ctx, "A", "10.0.0.1:8080", longTTL)
	if err != nil || !ra.Live || ra.ID != "A" {
		t.Fatalf("Heartbeat A = %+v, %v", ra, err)
	}
	if _, err := b.Heartbeat(ctx, "B", "10.0.0.2:8080", longTTL); err != nil {
		t.Fatalf("Heartbeat B: %v", err)
	}
	ids := func() []string {
		rs, err := b.Replicas(ctx)
		if err != nil {
			t.Fatalf("Replicas: %v", err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.ID+"@"+r.Address)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"A@10.0.0.1:8080", "B@10.0.0.2:8080"}) {
		t.Fatalf("Replicas = %v", got)
	}
	ra2, err := a.Heartbeat(ctx, "A", "10.0.0.3:8080", longTTL)
	if err != nil || !ra2.Started.Equal(ra.Started) || !ra2.Expires.After(ra.Expires) {
		t.Fatalf("second Heartbeat A = %+v, %v; want started %v kept, a later expiry", ra2, err, ra.Started)
	}
	if _, err := b.Heartbeat(ctx, "B", "10.0.0.2:8080", shortTTL); err != nil {
		t.Fatalf("Heartbeat B: %v", err)
	}
	testwait.For(t, "B's registration to expire", func() bool {
		return slices.Equal(ids(), []string{"A@10.0.0.3:8080"})
	})

	// A leaves: its registration goes and its leases are free at once.
	la := mustAcquire(t, a, "h", "A", longTTL)
	if err := a.Leave(ctx, "A"); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	if got := ids(); len(got) != 0 {
		t.Fatalf("Replicas after A left = %v, want none", got)
	}
	if lb := mustAcquire(t, b, "h", "B", longTTL); lb.Token <= la.Token {
		t.Fatalf("B's token after A left %d, not above %d", lb.Token, la.Token)
	}
}

// TestFenceInvalid: a fence needs both a replica and a token, and the
// lease methods check their arguments.
func TestFenceInvalid(t *testing.T) {
	ctx := t.Context()
	s := openShared(t, pgtest.NewDatabase(t), postgres.Options{})
	for _, c := range []struct {
		name string
		err  error
	}{
		{"fence without token", s.Write(ctx, persistence.Change{Handler: testHandler("h"), Fence: persistence.Fence{Replica: "A"}})},
		{"fence without replica", s.Write(ctx, persistence.Change{Handler: testHandler("h"), Fence: persistence.Fence{Token: 1}})},
		{"acquire without ttl", func() error { _, _, err := s.Acquire(ctx, "h", "A", 0); return err }()},
		{"heartbeat without id", func() error { _, err := s.Heartbeat(ctx, "", "x", time.Second); return err }()},
		{"another handler's fence", s.Write(ctx, persistence.Change{Handler: testHandler("h"), Fence: persistence.Fence{Handler: "g", Replica: "A", Token: 1}})},
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
	if err := s.Write(ctx, persistence.Change{Handler: testHandler("h"), Fence: persistence.Fence{Replica: "A", Token: 1}}); !errors.Is(err, persistence.ErrFenced) {
		t.Errorf("fenced Write of a handler without a lease: %v, want ErrFenced", err)
	}
}

// TestLeaseTablesAddedToExistingDatabase: a database of the first schema
// (no lease tables), with a handler in it, gets the lease tables when
// this wfd opens it, and keeps its data.
func TestLeaseTablesAddedToExistingDatabase(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	s := openShared(t, url, postgres.Options{})
	if err := s.Write(ctx, persistence.Change{Handler: owned("h", "old")}); err != nil {
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
	l := mustAcquire(t, s, "h", "A", longTTL)
	if err := s.Write(ctx, persistence.Change{Handler: owned("h", "A"), Fence: l.Fence()}); err != nil {
		t.Fatalf("fenced Write after the upgrade: %v", err)
	}
	if got := ownerOf(t, s, "h"); got != "A" {
		t.Fatalf("owner %q, want A", got)
	}
}

// TestLeaseFencingUnderRace: A appends records to its handler as fast as
// it can, with its fence, while B waits for A's lease to expire and takes
// it. Every Write of A that succeeded committed before B's Acquire (B
// reads all of them), and every Write after it is refused.
func TestLeaseFencingUnderRace(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})
	const perWrite = 200
	la := mustAcquire(t, a, "h", "A", shortTTL)
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence()}); err != nil {
		t.Fatalf("A's fenced create: %v", err)
	}
	var (
		lastOK  uint64 // A's last acknowledged record
		aErr    error
		written = make(chan struct{}) // closed after A's first acknowledged append
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		// Large Writes: each spends a while between its locked read and
		// its COMMIT, where B's Acquire must wait for it.
		data := bytes.Repeat([]byte("a"), 4<<10)
		for seq := uint64(1); ; seq += perWrite {
			recs := make([]persistence.Record, perWrite)
			for i := range recs {
				recs[i] = persistence.Record{Seq: seq + uint64(i), Data: data}
			}
			err := a.Write(context.Background(), persistence.Change{Handler: owned("h", "A"), Fence: la.Fence(), Records: recs})
			if err != nil {
				aErr = err
				return
			}
			lastOK = seq + perWrite - 1
			if seq == 1 {
				close(written)
			}
		}
	}()
	<-written
	lb := waitAcquire(t, b, "h", "B")
	got, err := b.GetHandler(ctx, "h")
	if err != nil {
		t.Fatalf("GetHandler: %v", err)
	}
	<-done
	if !errors.Is(aErr, persistence.ErrFenced) {
		t.Fatalf("A's Write stopped with %v, want ErrFenced", aErr)
	}
	if lastOK != got.LastSeq {
		t.Fatalf("A's last acknowledged record is %d, B read last seq %d after taking the lease: want equal", lastOK, got.LastSeq)
	}
	if err := b.Write(ctx, persistence.Change{Handler: owned("h", "B"), Fence: lb.Fence(),
		Records: []persistence.Record{{Seq: got.LastSeq + 1, Data: []byte("b")}}}); err != nil {
		t.Fatalf("B's fenced Write: %v", err)
	}
}
