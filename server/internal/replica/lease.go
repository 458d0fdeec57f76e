package replica

// The handler leases a replica holds: taken before a handler enters
// memory, the fence of every change committed for it, renewed together,
// and freed when it leaves memory.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// Renew heartbeats the registry and renews every held lease in one
// statement; the handlers whose lease was taken leave memory. When
// renewals keep failing, every handler leaves memory before its lease can
// have expired: another replica may take it then, and its steps must not
// run in two places.
func (r *Replica) Renew(ctx context.Context) {
	if r == nil {
		return
	}
	sent := time.Now()
	held := r.snapshot()
	// A database that does not answer (a partition) must fail the
	// renewal in time for the check below, not hang it.
	rctx, cancel := context.WithTimeout(ctx, r.cfg.LeaseTTL/3)
	defer cancel()
	_, err := r.db.Heartbeat(rctx, r.cfg.ID, r.cfg.Address, r.cfg.LeaseTTL)
	var lost []string
	if err == nil {
		lost, err = r.db.Renew(rctx, r.cfg.ID, held, r.cfg.LeaseTTL)
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		since := time.Since(r.renewedAt)
		r.mu.Unlock()
		r.log.Warn("renewing leases failed", "replica", r.cfg.ID, "leases", len(held), "since_last_renewal", since, "err", err)
		if since >= r.cfg.LeaseTTL/2 {
			if n := r.dropAll(); n > 0 {
				r.log.Warn("leases not renewed for half their ttl; their handlers left memory", "replica", r.cfg.ID, "handlers", n)
			}
		}
		return
	}
	r.mu.Lock()
	r.renewedAt = sent
	r.mu.Unlock()
	r.readReplicas(rctx)
	if len(lost) == 0 {
		return
	}
	sentFence := make(map[string]persistence.Fence, len(held))
	for _, f := range held {
		sentFence[f.Handler] = f
	}
	for _, id := range lost {
		r.drop(id, sentFence[id])
	}
	r.log.Warn("leases taken by other replicas; their handlers left memory", "replica", r.cfg.ID, "handlers", len(lost))
}

func (r *Replica) snapshot() []persistence.Fence {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Collect(maps.Values(r.held))
}

// drop forgets a lease that is no longer this replica's (if it is still
// the one held) and takes its handler out of memory without committing.
func (r *Replica) drop(id string, f persistence.Fence) {
	r.mu.Lock()
	cur, ok := r.held[id]
	if !ok || cur.Token != f.Token {
		r.mu.Unlock()
		return // acquired again since: a newer lease
	}
	delete(r.held, id)
	r.mu.Unlock()
	r.rt.Drop(id)
}

func (r *Replica) dropAll() int {
	held := r.snapshot()
	for _, f := range held {
		r.drop(f.Handler, f)
	}
	return len(held)
}

// Fence is the claim the journal's changes of handler id carry; ok is
// false in replica mode when this replica holds no lease of it, or when
// it has not renewed its leases for a ttl (it was paused, or cut off
// from the database, and they may have expired): the change must not be
// committed. The database refuses a fence whose lease expired anyway;
// this spares it the attempt.
func (r *Replica) Fence(id string) (persistence.Fence, bool) {
	if r == nil {
		return persistence.Fence{}, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.held[id]
	return f, ok && time.Since(r.renewedAt) < r.cfg.LeaseTTL
}

// Acquire takes handler id's lease before the handler enters memory. A
// lease another live replica holds is an apierr.Owned.
func (r *Replica) Acquire(ctx context.Context, id string) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	_, ok := r.held[id]
	since := time.Since(r.renewedAt)
	r.mu.Unlock()
	if ok {
		return nil
	}
	// A replica cut off from its database answers at once rather than
	// hold the call (a forwarded one too) until the partition heals: the
	// caller's retry reaches a replica that can take the handler.
	if since >= r.cfg.LeaseTTL/2 {
		return fmt.Errorf("%w: replica %q has not renewed its leases for %s (its database does not answer)",
			apierr.ErrUnavailable, r.cfg.ID, since.Round(time.Millisecond))
	}
	lease, acquired, err := r.batch.acquire(ctx, id)
	if err != nil {
		return err
	}
	if !acquired {
		return r.owned(ctx, lease)
	}
	r.mu.Lock()
	r.held[id] = lease.Fence()
	r.mu.Unlock()
	return nil
}

// errAcquireTimeout is a lease acquisition the database did not answer
// in time: Unavailable, as the replica may be cut off from it.
func errAcquireTimeout(r *Replica, err error) error {
	return fmt.Errorf("%w: taking handler leases: the database did not answer in %s (%v)", apierr.ErrUnavailable, r.cfg.LeaseTTL/2, err)
}

// AcquireEach is acquire of each of ids, at once: their requests share
// the acquirer's batches. The errors are by handler (none: acquired).
func (r *Replica) AcquireEach(ctx context.Context, ids []string) map[string]error {
	errs := make(map[string]error, len(ids))
	if r == nil {
		return errs
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, id := range ids {
		wg.Go(func() {
			if err := r.Acquire(ctx, id); err != nil {
				mu.Lock()
				errs[id] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

// Release frees handler id's lease, if held: it left memory (released,
// finished, lost, or never loaded). The store is told in the background:
// a lease not freed expires anyway, and a newer Acquire (by this replica
// or another) makes this Release a harmless ErrFenced.
func (r *Replica) Release(id string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	f, ok := r.held[id]
	delete(r.held, id)
	r.mu.Unlock()
	if ok {
		r.free(id, f)
	}
}

// free tells the store a lease this replica no longer holds is free, in
// the background.
func (r *Replica) free(id string, f persistence.Fence) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.cfg.LeaseTTL)
		defer cancel()
		if err := r.db.Release(ctx, id, f); err != nil && !errors.Is(err, persistence.ErrFenced) {
			r.log.Warn("releasing a handler's lease", "handler", id, "err", err)
		}
	}()
}

// Forget drops handler id's lease without releasing it: another replica
// holds it now (a change of it was fenced).
func (r *Replica) Forget(id string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.held, id)
	r.mu.Unlock()
}

// Left is told about a committed change: a handler that left memory
// (released or finished) had its lease freed by that commit (the journal
// sets Change.FreeLease), so it is only forgotten here.
func (r *Replica) Left(c *engine.Change) {
	if r != nil && (c.Released || c.Status.Terminal()) {
		r.Forget(c.HandlerID)
	}
}

// adopt makes leases this replica claimed (orphans, due timers) held, as
// Acquire does: the load that follows finds them held and does not
// acquire again. A claim never takes a live lease of this replica's, so
// any fence it replaces had expired.
func (r *Replica) adopt(claimed []persistence.Lease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range claimed {
		r.held[c.Handler] = c.Fence()
	}
}

// ReleaseClaimed frees a claimed lease (adopt) if it is still the one
// held: a load that used it and failed, or a newer acquire, has
// already dealt with it otherwise.
func (r *Replica) ReleaseClaimed(c persistence.Lease) {
	r.mu.Lock()
	f, ok := r.held[c.Handler]
	ok = ok && f.Token == c.Token
	if ok {
		delete(r.held, c.Handler)
	}
	r.mu.Unlock()
	if ok {
		r.free(c.Handler, f)
	}
}

// ClaimDue claims, and holds, the leases of up to limit handlers no
// replica holds whose timers are due at now (the runtime's scheduler).
func (r *Replica) ClaimDue(ctx context.Context, now time.Time, limit int) ([]persistence.Lease, error) {
	claimed, err := r.db.ClaimDue(ctx, r.cfg.ID, now, limit, r.cfg.LeaseTTL)
	r.adopt(claimed)
	return claimed, err
}

// ReleaseNow frees handler id's lease, if held, before it returns (where
// Release does it in the background): the replica the work goes
// to must find it free. A lease not freed expires.
func (r *Replica) ReleaseNow(ctx context.Context, id string) {
	f, held := r.Fence(id)
	r.Forget(id)
	if !held {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.LeaseTTL)
	defer cancel()
	if err := r.db.Release(rctx, id, f); err != nil && !errors.Is(err, persistence.ErrFenced) {
		r.log.Warn("releasing a handler's lease for the replica with its workers; it expires", "handler", id, "err", err)
	}
}
