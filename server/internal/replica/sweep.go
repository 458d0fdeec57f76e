package replica

// Claims in replica mode: work no replica holds goes to exactly one. The
// scheduler claims the handlers with due timers (the runtime's timers), and a sweep
// every third of the lease time claims the orphans: handlers some replica
// had in memory (ResidencyActive) whose lease has expired or was freed, as
// when a replica dies (SIGKILL, a lost machine) without leaving. Without
// the sweep they would wait for a call or a timer; with it they run on
// within about a lease time. Each claim is one transaction whose handlers
// no concurrent claim gets (persistence.Claimer); the claimed leases are
// held (Replica.adopt) before the handlers are loaded.

import (
	"context"
	"errors"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/live"
)

// sweepBatch is how many orphans one claim takes.
const sweepBatch = 64

// Sweep starts claiming and resuming orphaned handlers every third of
// the lease time, in the runtime's background, until it ends.
func (r *Replica) Sweep() {
	if r == nil {
		return
	}
	r.rt.Go(func() { r.sweep(r.rt.Background()) })
}

// sweep claims and resumes orphaned handlers every third of the lease
// time until ctx is done.
func (r *Replica) sweep(ctx context.Context) {
	every(ctx, r.cfg.LeaseTTL/3, func() { r.sweepOnce(ctx) })
}

// sweepOnce claims orphans until none is left, and resumes them as
// start-up recovery does: busy ones are loaded and run on, idle ones are
// marked released under the claimed lease, without being loaded.
func (r *Replica) sweepOnce(ctx context.Context) {
	var n live.Resumed
	for ctx.Err() == nil {
		claimed, err := r.db.ClaimOrphans(ctx, r.cfg.ID, sweepBatch, r.cfg.LeaseTTL)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("claiming orphaned handlers", "err", err)
			}
			break
		}
		done := n.Total()
		r.adopt(claimed)
		idle, busy := r.claimedHandlers(ctx, claimed)
		// The idle ones in one Write (resume frees their leases, whether
		// it commits or not).
		if err := r.rt.Resume(ctx, idle, &n); err != nil && ctx.Err() == nil {
			r.log.Warn("releasing orphaned idle handlers", "err", err)
		}
		for _, c := range busy {
			if err := r.rt.Resume(ctx, []persistence.Handler{c.h}, &n); err != nil && ctx.Err() == nil {
				r.log.Warn("resuming an orphaned handler", "handler", c.h.ID, "err", err)
				// It did not enter memory under this claim.
				r.rt.ReleaseClaimed(c.lease)
			}
		}
		// A full batch may have more behind it, unless some of it could
		// not be resumed (they would be claimed again at once).
		if len(claimed) < sweepBatch || n.Total()-done < len(claimed) {
			break
		}
	}
	if n.Any() {
		r.log.Info("resumed orphaned handlers", "replica", r.cfg.ID, "resumed", n.Resumed, "released", n.Released, "failed", n.Failed)
	}
}

// claimedOrphan is a claimed handler to load, with its claimed lease.
type claimedOrphan struct {
	h     persistence.Handler
	lease persistence.Lease
}

// claimedHandlers reads the claimed handlers' metadata and sorts those
// still running and not released into idle and busy ones; the others'
// claimed leases are freed at once (nothing entered memory under them).
// A handler already in memory here is left as it is.
func (r *Replica) claimedHandlers(ctx context.Context, claimed []persistence.Lease) (idle []persistence.Handler, busy []claimedOrphan) {
	for _, c := range claimed {
		if _, ok := r.rt.Engine().Handler(c.Handler); ok {
			continue
		}
		h, err := r.store.GetHandler(ctx, c.Handler)
		switch {
		case err == nil && h.Status == persistence.StatusRunning && h.Residency == persistence.ResidencyActive:
			if h.IdleSince.IsZero() {
				busy = append(busy, claimedOrphan{h: h, lease: c})
			} else {
				idle = append(idle, h)
			}
			continue
		case err != nil && !errors.Is(err, persistence.ErrNotFound) && ctx.Err() == nil:
			r.log.Warn("reading a claimed handler", "handler", c.Handler, "err", err)
		}
		r.rt.ReleaseClaimed(c)
	}
	return idle, busy
}
