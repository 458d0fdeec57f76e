package replica

import (
	"context"
	"fmt"
	"sync"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// maxAcquireBatch bounds the handlers one AcquireMany takes.
const maxAcquireBatch = 512

// acquirer batches the lease acquisitions of concurrent starts and loads
// into one AcquireMany, as the journal batches commits: one transaction,
// and one WAL flush, for all the handlers that came in while the last
// batch was in flight, not one each (which made a lease cost more of the
// database than the handler's own commits). One batch is in flight at a
// time; a goroutine runs while there are requests.
type acquirer struct {
	r *Replica

	mu      sync.Mutex
	queue   []*acquireReq
	running bool
}

type acquireReq struct {
	id    string
	done  chan struct{}
	lease persistence.Lease
	ok    bool // acquired
	known bool // acquired, or lease is the live holder's
	err   error
}

// acquire takes handler id's lease with the next batch. When another
// replica holds it, ok is false and lease is the holder's.
func (a *acquirer) acquire(ctx context.Context, id string) (lease persistence.Lease, ok bool, err error) {
	for range maxAcquireLaps {
		r := &acquireReq{id: id, done: make(chan struct{})}
		a.mu.Lock()
		a.queue = append(a.queue, r)
		if !a.running {
			a.running = true
			go a.run(context.WithoutCancel(ctx))
		}
		a.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			// A lease the batch takes for it anyway is never renewed: it
			// expires, or this replica takes it again (its own lease).
			return persistence.Lease{}, false, ctx.Err()
		}
		if r.err != nil || r.known {
			return r.lease, r.ok, r.err
		}
		// Taken in the instant between the batch's read and its upsert:
		// by another replica, whose lease names it, or by one that has
		// freed it again since (a load that found nothing to load), in
		// which case it is free to take: try again.
		lease, err := a.r.db.Lease(ctx, id)
		if err != nil || (lease.Live && lease.Owner != a.r.cfg.ID) {
			return lease, false, err
		}
	}
	return persistence.Lease{}, false, fmt.Errorf("%w: handler %s's lease changed hands %d times while this replica took it; try again",
		apierr.ErrUnavailable, id, maxAcquireLaps)
}

// maxAcquireLaps bounds how often acquire tries again for a lease that
// was freed between a batch's read and its upsert.
const maxAcquireLaps = 8

// run takes batches off the queue until it is empty. ctx carries the
// values of the call that started it, not its end: the batch is every
// waiting caller's.
func (a *acquirer) run(ctx context.Context) {
	for {
		a.mu.Lock()
		n := min(len(a.queue), maxAcquireBatch)
		if n == 0 {
			a.running = false
			a.mu.Unlock()
			return
		}
		batch := a.queue[:n:n]
		a.queue = a.queue[n:]
		a.mu.Unlock()

		ids := make([]string, len(batch))
		for i, r := range batch {
			ids[i] = r.id
		}
		bctx, cancel := context.WithTimeout(ctx, a.r.cfg.LeaseTTL/2)
		got, elsewhere, err := a.r.db.AcquireMany(bctx, ids, a.r.cfg.ID, a.r.cfg.LeaseTTL)
		if err != nil && bctx.Err() != nil {
			err = errAcquireTimeout(a.r, err)
		}
		cancel()
		acquired := make(map[string]persistence.Lease, len(got))
		for _, l := range got {
			acquired[l.Handler] = l
		}
		held := make(map[string]persistence.Lease, len(elsewhere))
		for _, l := range elsewhere {
			held[l.Handler] = l
		}
		for _, r := range batch {
			r.err = err
			if l, ok := acquired[r.id]; ok {
				r.lease, r.ok, r.known = l, true, true
			} else if l, ok := held[r.id]; ok {
				r.lease, r.known = l, true
			}
			close(r.done)
		}
	}
}
