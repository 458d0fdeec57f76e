package server

import (
	"context"
	"errors"
	"time"

	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"
)

// The ports of the rooms (live.Ownership, workers.Replica, rpc.Replica),
// served by replica mode's leases and forwarder.

// ownership is live.Ownership in replica mode: the leases, and the
// forwarder for publications.
type ownership struct {
	l *leases
	f *forwarder
}

var _ live.Ownership = ownership{}

func (o ownership) ID() string                                   { return o.l.id() }
func (o ownership) Acquire(ctx context.Context, id string) error { return o.l.acquire(ctx, id) }
func (o ownership) AcquireEach(ctx context.Context, ids []string) map[string]error {
	return o.l.acquireEach(ctx, ids)
}
func (o ownership) Fence(id string) (persistence.Fence, bool) { return o.l.fence(id) }
func (o ownership) Release(id string)                         { o.l.release(id) }
func (o ownership) Forget(id string)                          { o.l.forget(id) }
func (o ownership) Renew(ctx context.Context)                 { o.l.renew(ctx) }
func (o ownership) Left(c *engine.Change)                     { o.l.left(c) }
func (o ownership) ReleaseClaimed(c persistence.Lease)        { o.l.releaseClaimed(c) }
func (o ownership) ReleaseNow(ctx context.Context, id string) { o.l.releaseNow(ctx, id) }

func (o ownership) ClaimDue(ctx context.Context, now time.Time, limit int) ([]persistence.Lease, error) {
	claimed, err := o.l.db.ClaimDue(ctx, o.l.cfg.ID, now, limit, o.l.cfg.LeaseTTL)
	o.l.adopt(claimed)
	return claimed, err
}

func (o ownership) Publication(ctx context.Context, owned *apierr.Owned, p *persistence.Published) (bool, error) {
	return o.f.publication(ctx, owned, p)
}

// replicaPort is workers.Replica: this replica's leases, and whether a
// call was forwarded.
type replicaPort struct{ l *leases }

func (p replicaPort) ID() string                                { return p.l.id() }
func (p replicaPort) LeaseTTL() time.Duration                   { return p.l.cfg.LeaseTTL }
func (p replicaPort) ReleaseNow(ctx context.Context, id string) { p.l.releaseNow(ctx, id) }
func (p replicaPort) Forwarded(ctx context.Context) bool        { return forwarded(ctx) }

// rpcReplica is rpc.Replica: replica mode's leases (nil: one process).
type rpcReplica struct{ l *leases }

func (r rpcReplica) FillOwners(ctx context.Context, hs []*wfdv1.Handler) { r.l.fillOwners(ctx, hs) }
func (r rpcReplica) Elsewhere(ctx context.Context, id string) error      { return r.l.elsewhere(ctx, id) }
func (r rpcReplica) Forwarded(ctx context.Context) bool                  { return forwarded(ctx) }
func (r rpcReplica) Replicas(ctx context.Context) ([]persistence.Replica, error) {
	if r.l == nil {
		return nil, nil
	}
	return r.l.db.Replicas(ctx)
}

// releaseNow frees handler id's lease, if held, before it returns (where
// leases.release does it in the background): the replica the work goes
// to must find it free. A lease not freed expires.
func (l *leases) releaseNow(ctx context.Context, id string) {
	f, held := l.fence(id)
	l.forget(id)
	if !held {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.LeaseTTL)
	defer cancel()
	if err := l.db.Release(rctx, id, f); err != nil && !errors.Is(err, persistence.ErrFenced) {
		l.s.log.Warn("releasing a handler's lease for the replica with its workers; it expires", "handler", id, "err", err)
	}
}
