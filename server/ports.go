package server

import (
	"context"
	"time"

	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"
)

// The runtime's ports (live.Ownership, live.Workers), served
// by the server's replica and worker parts.

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

// workersPort is live.Workers: the step workers' registry.
type workersPort struct{ r *workerRegistry }

func (w workersPort) RouteLoad(ctx context.Context, id, workflow string) error {
	return w.r.routeLoad(ctx, id, workflow)
}
func (w workersPort) Definition(ctx context.Context, workflow string) { w.r.definition(ctx, workflow) }
func (w workersPort) KickRoutes()                                     { w.r.kickRoutes() }
func (w workersPort) WaitingFor(id string) []*wfdv1.RunWaitingForWorker {
	return w.r.waitingFor(id)
}

// rpcWorkers is rpc.Workers: the step workers' registry.
type rpcWorkers struct{ r *workerRegistry }

func (w rpcWorkers) Serving(workflow string) (bool, int32) { return w.r.serving(workflow) }
func (w rpcWorkers) SyncStored(ctx context.Context)        { w.r.syncStored(ctx) }
func (w rpcWorkers) RouteStart(ctx context.Context, workflow, id string) error {
	return w.r.routeStart(ctx, workflow, id)
}

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
