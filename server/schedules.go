package server

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/server/internal/live"
	"github.com/wfd-dev/wfd/server/internal/workers"
)

// scheduleRuns is the handler runtime as the scheduler uses it
// (schedules.Runs).
type scheduleRuns struct {
	rt      *live.Runtime
	workers *workers.Registry
}

// Start starts a scheduled run here; a worker-defined workflow whose
// workers are on another replica is registered from the store first, and
// its runs are handed over to them (as a child's are).
func (r scheduleRuns) Start(ctx context.Context, workflow, version, id string, input *structpb.Struct) (bool, error) {
	r.workers.Definition(ctx, workflow, version)
	_, started, err := r.rt.Start(ctx, live.StartRequest{Workflow: workflow, Version: version, ID: id, Input: input})
	return started, err
}

func (r scheduleRuns) Cancel(ctx context.Context, id string) error {
	return r.rt.WithLive(ctx, id, func(h *engine.Handler) error { return h.Cancel(ctx) })
}

func (r scheduleRuns) Known(ctx context.Context, workflow string) error {
	r.workers.Definition(ctx, workflow, "")
	if _, ok := r.rt.Engine().Workflow(workflow); !ok {
		return fmt.Errorf("%w: %q", engine.ErrUnknownWorkflow, workflow)
	}
	return nil
}
