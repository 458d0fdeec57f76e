package live

import (
	"context"
	"time"

	"github.com/wfd-dev/wfd/engine"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// Ownership is what the runtime needs of replica mode: the leases by which
// a replica owns the handlers it has in memory, and the forwarding of
// publications to the replica that owns a handler. Options.Ownership nil:
// one process, which owns every handler.
//
// A call for a handler another live replica holds fails with an
// *apierr.Owned error naming that replica.
type Ownership interface {
	// ID is this replica's id ("" in a single process).
	ID() string
	// Acquire takes handler id's lease (or finds it held by this replica).
	Acquire(ctx context.Context, id string) error
	// AcquireEach is Acquire of several handlers, each with its outcome.
	AcquireEach(ctx context.Context, ids []string) map[string]error
	// Fence is the lease claim a change of handler id carries; ok false
	// when this replica holds no lease of it. A single process holds them
	// all, with the zero Fence.
	Fence(id string) (f persistence.Fence, ok bool)
	// Release frees handler id's lease in the background.
	Release(id string)
	// Forget drops handler id's lease without freeing it (freed by a
	// commit, or taken by another replica).
	Forget(id string)
	// Renew renews the leases held now.
	Renew(ctx context.Context)
	// Left is told about every committed change, to free the lease of a
	// handler that left memory.
	Left(c *engine.Change)
	// ClaimDue claims, and holds, the leases of up to limit handlers no
	// replica holds whose timers are due at now.
	ClaimDue(ctx context.Context, now time.Time, limit int) ([]persistence.Lease, error)
	// ReleaseClaimed frees a claimed lease of a handler that did not enter
	// memory under it.
	ReleaseClaimed(c persistence.Lease)
	// Publication delivers publication p to handler owned.Handler on the
	// replica that owns it; took reports whether the handler took it.
	Publication(ctx context.Context, owned *apierr.Owned, p *persistence.Published) (took bool, err error)
	// ReleaseNow frees handler id's lease before it returns, so that
	// another replica finds it free.
	ReleaseNow(ctx context.Context, id string)
}

// Workers is what the runtime needs of the step workers.
type Workers interface {
	// RouteLoad refuses, with an *apierr.Owned error naming a replica
	// with its workers, a load of handler id of a worker-defined
	// workflow that is served elsewhere only. version is the one it runs.
	RouteLoad(ctx context.Context, id, workflow, version string) error
	// Definition registers a version of a workflow ("": its current one)
	// defined by workers on another replica from the store, if it is one.
	Definition(ctx context.Context, workflow, version string)
	// ServedElsewhere says whether only workers on other replicas serve
	// version of workflow (replica mode).
	ServedElsewhere(ctx context.Context, workflow, version string) bool
	// KickRoutes asks for the handlers waiting for a worker to be handed
	// over to replicas with one.
	KickRoutes()
	// WaitingFor says what runs of handler id wait for a worker.
	WaitingFor(id string) []*wfdv1.RunWaitingForWorker
}

// Health is what the runtime needs of the store's health.
type Health interface {
	// Committed is told whether each commit reached the store, and how
	// many bytes it held.
	Committed(err error, size int)
	// WhenCommitting waits until the store commits again; false: ctx
	// ended first.
	WhenCommitting(ctx context.Context) bool
}

// single is the Ownership of one process: it owns every handler.
type single struct{}

func (single) ID() string                            { return "" }
func (single) Acquire(context.Context, string) error { return nil }
func (single) AcquireEach(context.Context, []string) map[string]error {
	return nil
}
func (single) Fence(string) (persistence.Fence, bool) { return persistence.Fence{}, true }
func (single) Release(string)                         {}
func (single) Forget(string)                          {}
func (single) Renew(context.Context)                  {}
func (single) Left(*engine.Change)                    {}
func (single) ClaimDue(context.Context, time.Time, int) ([]persistence.Lease, error) {
	return nil, nil
}
func (single) ReleaseClaimed(persistence.Lease) {}
func (single) Publication(context.Context, *apierr.Owned, *persistence.Published) (bool, error) {
	return false, nil
}
func (single) ReleaseNow(context.Context, string) {}
