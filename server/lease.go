package server

// Replica mode (Options.Replica): several servers share one database and
// each handler in memory is owned by one of them through its lease
// (persistence.Leaser). A replica acquires a handler's lease before the
// handler enters memory (started, loaded, recovered), fences every change
// the journal commits for it with the lease's token, renews all its
// leases in one statement with its registry heartbeat, drops the handlers
// whose lease it lost, and releases a lease when its handler leaves memory
// (released or finished). A call for a handler another live replica owns
// is refused with an apierr.Owned naming that replica; the forwarder
// (forward.go) forwards the calls that deliver to a handler to it.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// DefaultLeaseTTL is a replica's registration and handler lease time when
// Replica.LeaseTTL is 0: a replica killed without leaving has its handlers
// taken over by others after at most this long.
const DefaultLeaseTTL = 10 * time.Second

// Replica configures replica mode. The zero Replica (no ID) is a single
// process: no leases, no registry.
type Replica struct {
	// ID names this replica in the registry and in leases; unique among
	// the replicas sharing the database.
	ID string
	// Address is the host:port clients can reach this replica at; it is
	// what a call refused elsewhere names (ListReplicas shows it).
	Address string
	// LeaseTTL is how long a registration and a handler lease last
	// without renewal (default DefaultLeaseTTL); they are renewed every
	// third of it.
	LeaseTTL time.Duration
}

// SessionTimeout is how long a replica with lease time ttl lets a
// database session hold a lock or an open transaction, or wait for a
// lock (postgres.Options.SessionTimeout): half the ttl, so a replica that
// is paused or cut off mid-transaction has lost the transaction and its
// row locks before its leases expire and others take its handlers over;
// but at least a second, below which a busy database would fail ordinary
// statements (with a ttl under 2 s the locks may outlast the leases by
// that much).
func SessionTimeout(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	return max(ttl/2, time.Second)
}

// leases are a replica's handler leases. A nil *leases is a single
// process: every method does nothing.
type leases struct {
	s   *Server
	db  persistence.Leaser
	cfg Replica

	// batch takes leases for several handlers at once (leasebatch.go).
	batch *acquirer

	mu   sync.Mutex
	held map[string]persistence.Fence
	// addrs are the live replicas' addresses by id (address).
	addrs map[string]string
	// renewedAt is when the last successful renewal was sent: the leases
	// are known to last until renewedAt + ttl by the database's clock,
	// so this replica's own clock, with a margin, bounds how long it may
	// go on running them without a renewal.
	renewedAt time.Time

	stop context.CancelFunc
	done chan struct{}
}

func newLeases(s *Server, cfg Replica) (*leases, error) {
	if cfg.ID == "" {
		return nil, nil
	}
	db, ok := s.store.(persistence.Leaser)
	if !ok {
		return nil, fmt.Errorf("server: replica mode needs a store with leases (PostgreSQL), not %T", s.store)
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	l := &leases{s: s, db: db, cfg: cfg, held: map[string]persistence.Fence{}}
	l.batch = &acquirer{l: l}
	return l, nil
}

// id is this replica's id ("" for a single process).
func (l *leases) id() string {
	if l == nil {
		return ""
	}
	return l.cfg.ID
}

// join registers the replica and starts renewing.
func (l *leases) join(ctx context.Context) error {
	if l == nil {
		return nil
	}
	sent := time.Now()
	if _, err := l.db.Heartbeat(ctx, l.cfg.ID, l.cfg.Address, l.cfg.LeaseTTL); err != nil {
		return fmt.Errorf("server: registering replica %q: %w", l.cfg.ID, err)
	}
	l.mu.Lock()
	l.renewedAt = sent
	l.mu.Unlock()
	// The renewals outlive the background context: they must go on while
	// Close checkpoints the handlers, until the journal's last commit.
	rctx, stop := context.WithCancel(context.Background())
	l.stop, l.done = stop, make(chan struct{})
	go l.run(rctx)
	l.s.log.Info("replica mode", "replica", l.cfg.ID, "advertise", l.cfg.Address, "lease_ttl", l.cfg.LeaseTTL)
	return nil
}

// leave stops renewing, ends the registration and frees every lease
// still held (once the journal has committed its last change).
func (l *leases) leave(ctx context.Context) error {
	if l == nil || l.stop == nil {
		return nil
	}
	l.stop()
	<-l.done
	// Past a ttl the leases have expired anyway.
	ctx, cancel := context.WithTimeout(ctx, l.cfg.LeaseTTL)
	defer cancel()
	if err := l.db.Leave(ctx, l.cfg.ID); err != nil {
		return fmt.Errorf("server: leaving as replica %q: %w", l.cfg.ID, err)
	}
	return nil
}

func (l *leases) run(ctx context.Context) {
	defer close(l.done)
	every(ctx, l.cfg.LeaseTTL/3, func() { l.renew(ctx) })
}

// renew heartbeats the registry and renews every held lease in one
// statement; the handlers whose lease was taken leave memory. When
// renewals keep failing, every handler leaves memory before its lease can
// have expired: another replica may take it then, and its steps must not
// run in two places.
func (l *leases) renew(ctx context.Context) {
	if l == nil {
		return
	}
	sent := time.Now()
	held := l.snapshot()
	// A database that does not answer (a partition) must fail the
	// renewal in time for the check below, not hang it.
	rctx, cancel := context.WithTimeout(ctx, l.cfg.LeaseTTL/3)
	defer cancel()
	_, err := l.db.Heartbeat(rctx, l.cfg.ID, l.cfg.Address, l.cfg.LeaseTTL)
	var lost []string
	if err == nil {
		lost, err = l.db.Renew(rctx, l.cfg.ID, held, l.cfg.LeaseTTL)
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		since := time.Since(l.renewedAt)
		l.mu.Unlock()
		l.s.log.Warn("renewing leases failed", "replica", l.cfg.ID, "leases", len(held), "since_last_renewal", since, "err", err)
		if since >= l.cfg.LeaseTTL/2 {
			if n := l.dropAll(); n > 0 {
				l.s.log.Warn("leases not renewed for half their ttl; their handlers left memory", "replica", l.cfg.ID, "handlers", n)
			}
		}
		return
	}
	l.mu.Lock()
	l.renewedAt = sent
	l.mu.Unlock()
	l.readReplicas(rctx)
	if len(lost) == 0 {
		return
	}
	sentFence := make(map[string]persistence.Fence, len(held))
	for _, f := range held {
		sentFence[f.Handler] = f
	}
	for _, id := range lost {
		l.drop(id, sentFence[id])
	}
	l.s.log.Warn("leases taken by other replicas; their handlers left memory", "replica", l.cfg.ID, "handlers", len(lost))
}

func (l *leases) snapshot() []persistence.Fence {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Collect(maps.Values(l.held))
}

// drop forgets a lease that is no longer this replica's (if it is still
// the one held) and takes its handler out of memory without committing.
func (l *leases) drop(id string, f persistence.Fence) {
	l.mu.Lock()
	cur, ok := l.held[id]
	if !ok || cur.Token != f.Token {
		l.mu.Unlock()
		return // acquired again since: a newer lease
	}
	delete(l.held, id)
	l.mu.Unlock()
	l.s.rt.Drop(id)
}

func (l *leases) dropAll() int {
	held := l.snapshot()
	for _, f := range held {
		l.drop(f.Handler, f)
	}
	return len(held)
}

// fence is the claim the journal's changes of handler id carry; ok is
// false in replica mode when this replica holds no lease of it, or when
// it has not renewed its leases for a ttl (it was paused, or cut off
// from the database, and they may have expired): the change must not be
// committed. The database refuses a fence whose lease expired anyway;
// this spares it the attempt.
func (l *leases) fence(id string) (persistence.Fence, bool) {
	if l == nil {
		return persistence.Fence{}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.held[id]
	return f, ok && time.Since(l.renewedAt) < l.cfg.LeaseTTL
}

// acquire takes handler id's lease before the handler enters memory. A
// lease another live replica holds is an apierr.Owned.
func (l *leases) acquire(ctx context.Context, id string) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	_, ok := l.held[id]
	since := time.Since(l.renewedAt)
	l.mu.Unlock()
	if ok {
		return nil
	}
	// A replica cut off from its database answers at once rather than
	// hold the call (a forwarded one too) until the partition heals: the
	// caller's retry reaches a replica that can take the handler.
	if since >= l.cfg.LeaseTTL/2 {
		return fmt.Errorf("%w: replica %q has not renewed its leases for %s (its database does not answer)",
			apierr.ErrUnavailable, l.cfg.ID, since.Round(time.Millisecond))
	}
	lease, acquired, err := l.batch.acquire(ctx, id)
	if err != nil {
		return err
	}
	if !acquired {
		return l.owned(ctx, lease)
	}
	l.mu.Lock()
	l.held[id] = lease.Fence()
	l.mu.Unlock()
	return nil
}

// errAcquireTimeout is a lease acquisition the database did not answer
// in time: Unavailable, as the replica may be cut off from it.
func errAcquireTimeout(l *leases, err error) error {
	return fmt.Errorf("%w: taking handler leases: the database did not answer in %s (%v)", apierr.ErrUnavailable, l.cfg.LeaseTTL/2, err)
}

// acquireEach is acquire of each of ids, at once: their requests share
// the acquirer's batches. The errors are by handler (none: acquired).
func (l *leases) acquireEach(ctx context.Context, ids []string) map[string]error {
	errs := make(map[string]error, len(ids))
	if l == nil {
		return errs
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, id := range ids {
		wg.Go(func() {
			if err := l.acquire(ctx, id); err != nil {
				mu.Lock()
				errs[id] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

func (l *leases) owned(ctx context.Context, lease persistence.Lease) error {
	e := &apierr.Owned{Handler: lease.Handler, Owner: lease.Owner, Address: l.address(ctx, lease.Owner)}
	if lease.Left > 0 {
		e.Until = time.Now().Add(lease.Left)
	}
	return e
}

// address is where replica id said it can be reached ("" if it is not
// registered), from the registry as last read: every renewal reads it
// again, so a call for a handler live elsewhere costs no query for it.
// An id not known yet is looked up at once.
func (l *leases) address(ctx context.Context, id string) string {
	l.mu.Lock()
	a, ok := l.addrs[id]
	l.mu.Unlock()
	if ok {
		return a
	}
	l.readReplicas(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addrs[id]
}

// readReplicas refreshes the addresses of the live replicas. A replica
// that is no longer listed keeps its last address: its registration can
// expire a moment before the leases it took since its last heartbeat (a
// paused or dying replica), and a call for one of those handlers is
// refused naming where it is, not "no address".
func (l *leases) readReplicas(ctx context.Context) {
	rs, err := l.db.Replicas(ctx)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addrs == nil {
		l.addrs = make(map[string]string, len(rs))
	}
	for _, r := range rs {
		l.addrs[r.ID] = r.Address
	}
}

// release frees handler id's lease, if held: it left memory (released,
// finished, lost, or never loaded). The store is told in the background:
// a lease not freed expires anyway, and a newer Acquire (by this replica
// or another) makes this Release a harmless ErrFenced.
func (l *leases) release(id string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	f, ok := l.held[id]
	delete(l.held, id)
	l.mu.Unlock()
	if ok {
		l.free(id, f)
	}
}

// free tells the store a lease this replica no longer holds is free, in
// the background.
func (l *leases) free(id string, f persistence.Fence) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.LeaseTTL)
		defer cancel()
		if err := l.db.Release(ctx, id, f); err != nil && !errors.Is(err, persistence.ErrFenced) {
			l.s.log.Warn("releasing a handler's lease", "handler", id, "err", err)
		}
	}()
}

// forget drops handler id's lease without releasing it: another replica
// holds it now (a change of it was fenced).
func (l *leases) forget(id string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	delete(l.held, id)
	l.mu.Unlock()
}

// left is told about a committed change: a handler that left memory
// (released or finished) had its lease freed by that commit (the journal
// sets Change.FreeLease), so it is only forgotten here.
func (l *leases) left(c *engine.Change) {
	if l != nil && (c.Released || c.Status.Terminal()) {
		l.forget(c.HandlerID)
	}
}

// elsewhere is an apierr.Owned when another live replica holds handler
// id's lease: a call that does not load the handler (ReleaseHandler)
// belongs there (and is forwarded, forward.go). nil when
// this replica holds it, nobody does, or the lease cannot be read (the
// call goes on here, as in a single process).
func (l *leases) elsewhere(ctx context.Context, id string) error {
	if l == nil {
		return nil
	}
	lease, ok, err := l.holder(ctx, id)
	if err != nil || !ok {
		return nil
	}
	return l.owned(ctx, lease)
}

// holder reads the live lease another replica holds of handler id; ok
// is false when this replica holds it or nobody does.
func (l *leases) holder(ctx context.Context, id string) (lease persistence.Lease, ok bool, err error) {
	if _, held := l.fence(id); held {
		return persistence.Lease{}, false, nil
	}
	lease, err = l.db.Lease(ctx, id)
	if err != nil || !lease.Live || lease.Owner == l.cfg.ID {
		return persistence.Lease{}, false, err
	}
	return lease, true, nil
}

// adopt makes leases this replica claimed (sweep.go, timers.go) held, as
// acquire does: the load that follows finds them held and does not
// acquire again. A claim never takes a live lease of this replica's, so
// any fence it replaces had expired.
func (l *leases) adopt(claimed []persistence.Lease) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range claimed {
		l.held[c.Handler] = c.Fence()
	}
}

// releaseClaimed frees a claimed lease (adopt) if it is still the one
// held: a load that used it and failed, or a newer acquire, has
// already dealt with it otherwise.
func (l *leases) releaseClaimed(c persistence.Lease) {
	l.mu.Lock()
	f, ok := l.held[c.Handler]
	ok = ok && f.Token == c.Token
	if ok {
		delete(l.held, c.Handler)
	}
	l.mu.Unlock()
	if ok {
		l.free(c.Handler, f)
	}
}

// fillOwners sets the owner of the running handlers of a page that this
// replica does not hold (view sets its own), from one query of the live
// leases. The owner is informative: if it cannot be read, it stays unset.
func (l *leases) fillOwners(ctx context.Context, hs []*wfdv1.Handler) {
	if l == nil {
		return
	}
	var ids []string
	for _, h := range hs {
		if h.GetOwner() == "" && h.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
			ids = append(ids, h.GetHandlerId())
		}
	}
	if len(ids) == 0 {
		return
	}
	owners, err := l.db.Owners(ctx, ids)
	if err != nil {
		l.s.log.Debug("reading the owners of listed handlers", "err", err)
		return
	}
	for _, h := range hs {
		if o, ok := owners[h.GetHandlerId()]; ok && h.GetOwner() == "" {
			h.Owner = o
		}
	}
}
