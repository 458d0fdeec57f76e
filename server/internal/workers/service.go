package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// service implements wfd.v1.WorkerService.
type service struct{ r *Registry }

// Connect registers a worker and streams it its runs until it goes.
func (v *service) Connect(ctx context.Context, req *wfdv1.ConnectRequest, out *connect.ServerStream[wfdv1.ConnectResponse]) error {
	r := v.r
	if req.GetMaxRuns() < 0 {
		return fmt.Errorf("%w: max_runs %d is negative", apierr.ErrInvalid, req.GetMaxRuns())
	}
	g := registrantOf(ctx, req.GetName())
	serves, err := r.register(ctx, g, req.GetWorkflows())
	if err != nil {
		if errors.Is(err, apierr.ErrPermissionDenied) {
			r.log.Info("worker refused", "name", g.source, "subject", g.id.Subject, "err", err)
		}
		return err
	}
	// Other replicas learn of it before it is listed (ListWorkers) or told
	// it is connected, so work started anywhere from then on comes here.
	r.advertise(ctx, serves)
	w := r.connect(g, int(req.GetMaxRuns()), serves)
	defer r.disconnect(w)
	r.log.Info("worker connected", "worker", w.id, "name", w.name, "subject", w.subject, "workflows", w.workflows, "max_runs", w.maxRuns)
	defer r.log.Info("worker disconnected", "worker", w.id, "name", w.name, "subject", w.subject)
	connected := &wfdv1.Connected{WorkerId: w.id}
	for _, v := range serves {
		connected.Versions = append(connected.Versions, v.version)
	}
	if err := out.Send(&wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_Connected{Connected: connected}}); err != nil {
		return err
	}
	heartbeat := time.NewTicker(r.opts.Heartbeat)
	defer heartbeat.Stop()
	for {
		var m *wfdv1.ConnectResponse
		select {
		case m = <-w.out:
		case <-heartbeat.C:
			m = &wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_Heartbeat{Heartbeat: &wfdv1.Heartbeat{}}}
		case <-ctx.Done():
			return ctx.Err()
		case <-r.opts.Draining:
			// The worker reconnects to the next server. Its runs cannot
			// finish here (http.Server.Shutdown lets no new call in): their
			// proxies leave them in progress once the engine closes
			// (ErrInterrupted), and they run again after the restart.
			return apierr.ErrShuttingDown
		}
		if err := out.Send(m); err != nil {
			return err
		}
		heartbeat.Reset(r.opts.Heartbeat)
	}
}

// StepCall executes one context operation of a run on its StepContext.
func (v *service) StepCall(ctx context.Context, req *wfdv1.StepCallRequest) (*wfdv1.StepCallResponse, error) {
	run, err := v.r.run(ctx, req.GetRunId(), req.GetWorkerId())
	if err != nil {
		return nil, err
	}
	resp, err := run.call(ctx, req)
	return resp, err
}

// FinishRun ends a run.
func (v *service) FinishRun(ctx context.Context, req *wfdv1.FinishRunRequest) (*wfdv1.FinishRunResponse, error) {
	run, err := v.r.run(ctx, req.GetRunId(), req.GetWorkerId())
	if err != nil {
		return nil, err
	}
	if err := run.finish(ctx, req); err != nil {
		return nil, err
	}
	return &wfdv1.FinishRunResponse{}, nil
}

// ListWorkers lists the connected workers.
func (v *service) ListWorkers(context.Context, *wfdv1.ListWorkersRequest) (*wfdv1.ListWorkersResponse, error) {
	return &wfdv1.ListWorkersResponse{Workers: v.r.list()}, nil
}
