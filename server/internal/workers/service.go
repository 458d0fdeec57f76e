package workers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
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
	// held is a message taken from w.out while gathering a batch of
	// dispatches, sent after it.
	var held *wfdv1.ConnectResponse
	for {
		var m *wfdv1.ConnectResponse
		select {
		case m = <-w.out:
			if req.GetDispatchBatches() {
				m, held = gather(m, w.out)
			}
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
		if held != nil {
			if err := out.Send(held); err != nil {
				return err
			}
			held = nil
		}
		heartbeat.Reset(r.opts.Heartbeat)
	}
}

// maxBatch bounds the runs in one Dispatches and one FinishRuns.
const maxBatch = 1024

// gather turns m, if it is a dispatch, and the dispatches queued behind
// it into one Dispatches message: one stream message (and one write) for
// runs dispatched together. A message other than a dispatch found in the
// queue ends the batch and is returned as held, to be sent after it.
func gather(m *wfdv1.ConnectResponse, queue <-chan *wfdv1.ConnectResponse) (batch, held *wfdv1.ConnectResponse) {
	first, ok := m.GetKind().(*wfdv1.ConnectResponse_Dispatch)
	if !ok {
		return m, nil
	}
	ds := []*wfdv1.Dispatch{first.Dispatch}
gathering:
	for len(ds) < maxBatch {
		select {
		case next := <-queue:
			d, ok := next.GetKind().(*wfdv1.ConnectResponse_Dispatch)
			if !ok {
				held = next
				break gathering
			}
			ds = append(ds, d.Dispatch)
		default:
			break gathering
		}
	}
	if len(ds) == 1 {
		return m, held
	}
	return &wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_Dispatches{Dispatches: &wfdv1.Dispatches{Dispatches: ds}}}, held
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

// FinishRuns ends several runs, each as FinishRun would. Every run is
// handed to its proxy before any answer is awaited, so the runs' ends are
// applied side by side, as separate FinishRun calls would be.
func (v *service) FinishRuns(ctx context.Context, req *wfdv1.FinishRunsRequest) (*wfdv1.FinishRunsResponse, error) {
	if n := len(req.GetRuns()); n > maxBatch {
		return nil, fmt.Errorf("%w: runs: %d runs, at most %d in one call", apierr.ErrInvalid, n, maxBatch)
	}
	errs := make([]error, len(req.GetRuns()))
	calls := make([]*runCall, len(req.GetRuns()))
	for i, fin := range req.GetRuns() {
		run, err := v.r.run(ctx, fin.GetRunId(), fin.GetWorkerId())
		if err == nil {
			c := &runCall{fin: fin}
			if err = run.hand(ctx, c); err == nil {
				calls[i] = c
			}
		}
		errs[i] = err
	}
	resp := &wfdv1.FinishRunsResponse{Results: make([]*wfdv1.FinishRunResult, len(errs))}
	for i, c := range calls {
		if c != nil {
			errs[i] = c.await(ctx)
		}
		res := &wfdv1.FinishRunResult{}
		if err := apierr.ToConnect(errs[i]); err != nil {
			apierr.Edge{Log: v.r.log}.Report(ctx, wfdv1connect.WorkerServiceFinishRunsProcedure, err)
			res.Code, res.Message = uint32(connect.CodeOf(err)), connectMessage(err)
		}
		resp.Results[i] = res
	}
	return resp, nil
}

// connectMessage is a Connect error's message without its code.
func connectMessage(err error) string {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Message()
	}
	return err.Error()
}

// ListWorkers lists the connected workers.
func (v *service) ListWorkers(context.Context, *wfdv1.ListWorkersRequest) (*wfdv1.ListWorkersResponse, error) {
	return &wfdv1.ListWorkersResponse{Workers: v.r.list()}, nil
}
