package server

import (
	"context"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// The runtime's ports live.Workers and live.Health, served by the
// server's worker and health parts (internal/replica's Replica is
// live.Ownership itself).

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

// healthPort is live.Health: the store's health as commits tell it.
type healthPort struct{ h *health }

func (p healthPort) Committed(err error, size int)           { p.h.committed(err, size) }
func (p healthPort) WhenCommitting(ctx context.Context) bool { return p.h.whenCommitting(ctx) }
