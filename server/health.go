package server

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/grpchealth"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/persistence"
)

// healthProbeTimeout bounds the store read behind a health check, so that a
// stuck store makes the check say NOT_SERVING instead of hanging.
const healthProbeTimeout = 2 * time.Second

// health answers grpc.health.v1 for the process ("") and the workflow
// service. It says SERVING while the server runs and its store answers a
// read, and NOT_SERVING once shutdown has begun or when the store is
// unavailable (a disk error, or a reopen that failed), so that a load
// balancer or mesh sends calls elsewhere. Watch streams come from the
// embedded StaticChecker and change on shutdown.
type health struct {
	*grpchealth.StaticChecker
	store persistence.Store
}

var _ grpchealth.Watcher = (*health)(nil)

func newHealth(store persistence.Store) *health {
	return &health{StaticChecker: grpchealth.NewStaticChecker(wfdv1connect.WorkflowServiceName), store: store}
}

// Check is the static status, downgraded when the store cannot be read.
func (h *health) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	res, err := h.StaticChecker.Check(ctx, req)
	if err != nil || res.Status != grpchealth.StatusServing {
		return res, err
	}
	ctx, cancel := context.WithTimeout(ctx, healthProbeTimeout)
	defer cancel()
	if _, err := h.store.Count(ctx); err != nil && (errors.Is(err, persistence.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)) {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return res, nil
}

// shutdown makes every check say NOT_SERVING from now on.
func (h *health) shutdown() {
	h.SetStatus("", grpchealth.StatusNotServing)
	h.SetStatus(wfdv1connect.WorkflowServiceName, grpchealth.StatusNotServing)
}
