package rpc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/wfd-dev/wfd/attrs"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
)

var _ wfdv1connect.WorkflowServiceHandler = (*Service)(nil)

func (v *Service) RunWorkflow(ctx context.Context, req *wfdv1.RunWorkflowRequest) (*wfdv1.RunWorkflowResponse, error) {
	if err := validateRun(req, v.payloadLimits()); err != nil {
		return nil, err
	}
	// In replica mode, a worker-defined workflow starts where its workers
	// are (Workers.RouteStart).
	if err := v.workers.RouteStart(ctx, req.GetWorkflow(), req.GetVersion(), req.GetHandlerId()); err != nil {
		return nil, err
	}
	evs := make([]engine.InitialEvent, len(req.GetEvents()))
	for i, ev := range req.GetEvents() {
		evs[i] = engine.InitialEvent{Event: engine.Event{Type: ev.GetType(), Data: ev.GetData()}}
	}
	h, _, err := v.rt.Start(ctx, live.StartRequest{
		Workflow: req.GetWorkflow(), Version: req.GetVersion(), ID: req.GetHandlerId(), Input: req.GetInput(), Events: evs,
		Attributes: req.GetAttributes(),
	})
	if err != nil {
		return nil, err
	}
	if h, err = v.waitAfter(ctx, h, req.GetWait().AsDuration()); err != nil {
		return nil, err
	}
	return &wfdv1.RunWorkflowResponse{Handler: h}, nil
}

func (v *Service) GetHandler(ctx context.Context, req *wfdv1.GetHandlerRequest) (*wfdv1.GetHandlerResponse, error) {
	if err := checkHandlerID(req.GetHandlerId()); err != nil {
		return nil, err
	}
	h, err := v.rt.Get(ctx, req.GetHandlerId())
	if err != nil {
		return nil, err
	}
	v.replica.FillOwners(ctx, []*wfdv1.Handler{h}) // another replica's, or none
	if sl := h.GetSlot(); sl.GetQueued() {
		// Best effort: a queue the store cannot read now leaves it 0.
		if pos, err := v.store.SlotOf(ctx, persistence.SlotKey{Workflow: h.GetWorkflow(), Key: sl.GetKey()}, h.GetHandlerId()); err == nil && pos > 0 {
			sl.Position = uint32(min(pos, math.MaxUint32)) //nolint:gosec // bounded
		}
	}
	res := &wfdv1.GetHandlerResponse{Handler: h}
	if seq := req.GetAtSeq(); seq != 0 {
		if seq > h.GetLastSeq() {
			return nil, fmt.Errorf("%w: at_seq %d: the handler's stream ends at %d", apierr.ErrOutOfRange, seq, h.GetLastSeq())
		}
		if res.At, err = v.handlerAt(ctx, h, seq); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (v *Service) ListHandlers(ctx context.Context, req *wfdv1.ListHandlersRequest) (*wfdv1.ListHandlersResponse, error) {
	if err := validateList(req); err != nil {
		return nil, err
	}
	q := persistence.Query{
		Workflow: req.GetWorkflow(), Version: req.GetWorkflowVersion(), IdleOnly: req.GetIdleOnly(), Residency: persistence.Residency(req.GetResidency()),
		PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken(), Now: v.now(),
	}
	queued := queuedFilter(req.GetStatuses())
	for _, st := range req.GetStatuses() {
		if st == wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED {
			st = wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING // in the store, a queued handler runs
		}
		if !slices.Contains(q.Statuses, persistence.Status(st)) {
			q.Statuses = append(q.Statuses, persistence.Status(st))
		}
	}
	if d := req.GetIdleFor(); d != nil {
		q.IdleFor = d.AsDuration()
	}
	if src := req.GetWhere(); src != "" {
		where, err := attrs.Parse(src)
		if err != nil {
			return nil, fmt.Errorf("where: %w", err)
		}
		if err := where.Check(v.engine.AttributeSchema(req.GetWorkflow())); err != nil {
			if req.GetWorkflow() == "" {
				return nil, fmt.Errorf("where: %w (a condition on search attributes needs the workflow whose attributes they are)", err)
			}
			return nil, fmt.Errorf("where: %w", err)
		}
		q.Where = where
	}
	hs, next, err := v.store.ListHandlers(ctx, q)
	if ue := (*persistence.UnindexedError)(nil); errors.As(err, &ue) {
		// The store's reason, without the layers it passed through.
		return nil, fmt.Errorf("%w: where: no index answers the query: %s", apierr.ErrInvalid, ue.Reason)
	}
	if err != nil {
		return nil, err
	}
	out := &wfdv1.ListHandlersResponse{NextPageToken: next, Handlers: make([]*wfdv1.Handler, 0, len(hs))}
	for i := range hs {
		if h := v.rt.View(&hs[i]); queued(h) {
			out.Handlers = append(out.Handlers, h)
		}
	}
	v.replica.FillOwners(ctx, out.Handlers)
	return out, nil
}

func (v *Service) SendEvent(ctx context.Context, req *wfdv1.SendEventRequest) (*wfdv1.SendEventResponse, error) {
	if err := validateSend(req, v.payloadLimits()); err != nil {
		return nil, err
	}
	ev := engine.Event{Type: req.GetEvent().GetType(), Data: req.GetEvent().GetData()}
	opts := engine.SendOptions{IdempotencyKey: req.GetIdempotencyKey()}
	// What the engine refuses of any event (a reserved type, say) is
	// refused before the handler's state is looked at.
	if err := v.engine.CheckEvent(ev, opts); err != nil {
		return nil, err
	}
	h, started, err := v.send(ctx, req, ev, opts)
	if err != nil {
		return nil, err
	}
	if h, err = v.waitAfter(ctx, h, req.GetWait().AsDuration()); err != nil {
		return nil, err
	}
	return &wfdv1.SendEventResponse{Handler: h, Started: started}, nil
}

// send delivers ev to the handler the request names. With
// SendEventRequest.start, a handler that does not exist is started with
// ev in the commit that creates it (started true); one that exists, or
// that a concurrent call created first, gets ev as without it, unless it
// runs another workflow (ALREADY_EXISTS). Whether it exists is read from
// the store first, without taking the handler's lease: a load of a
// handler that does not exist yet would take the lease and free it again,
// and calls racing through several replicas would chase it from one to
// the next. Only a missing handler is routed as a start (a
// worker-defined workflow starts on a replica with its workers).
func (v *Service) send(ctx context.Context, req *wfdv1.SendEventRequest, ev engine.Event, opts engine.SendOptions) (_ *wfdv1.Handler, started bool, _ error) {
	start := req.GetStart()
	if start != nil {
		if meta, err := v.rt.Meta(ctx, req.GetHandlerId()); !errors.Is(err, apierr.ErrNotFound) {
			if err != nil {
				return nil, false, err
			}
			if meta.Workflow != start.GetWorkflow() {
				return nil, false, fmt.Errorf("%w: handler %s runs workflow %q, not %q", apierr.ErrAlreadyExists, meta.ID, meta.Workflow, start.GetWorkflow())
			}
		} else {
			// In replica mode, a worker-defined workflow starts where its
			// workers are: the whole call is forwarded there.
			if err := v.workers.RouteStart(ctx, start.GetWorkflow(), start.GetVersion(), req.GetHandlerId()); err != nil {
				return nil, false, err
			}
			h, started, err := v.rt.Start(ctx, live.StartRequest{
				Workflow: start.GetWorkflow(), Version: start.GetVersion(), ID: req.GetHandlerId(), Input: start.GetInput(),
				Events:     []engine.InitialEvent{{Event: ev, IdempotencyKey: opts.IdempotencyKey}},
				Attributes: start.GetAttributes(),
			})
			if err != nil || started {
				return h, started, err
			}
		}
	}
	h, err := v.deliver(ctx, req.GetHandlerId(), ev, opts)
	return h, false, err
}

// deliver sends ev to handler id and answers with the handler once the
// event is durable.
func (v *Service) deliver(ctx context.Context, id string, ev engine.Event, opts engine.SendOptions) (*wfdv1.Handler, error) {
	key := opts.IdempotencyKey
	w := v.journal.Watch(id)
	defer w.Done()
	committed := &w
	var live *engine.Handler
	err := v.rt.WithLiveFor(ctx, id, &ev, func(h *engine.Handler) error { live = h; return h.SendEvent(ctx, ev, opts) })
	if key != "" && (errors.Is(err, engine.ErrHandlerDone) || errors.Is(err, engine.ErrInvalidEvent)) && v.rt.TookKey(ctx, id, key) {
		// A retry of an event the handler took (one that finished it, or
		// one it no longer waits for): acknowledge it, deliver nothing.
		err, live, committed = nil, nil, nil
	}
	if err != nil {
		return nil, err
	}
	return v.rt.AfterCommit(ctx, id, live, committed)
}

func (v *Service) CancelHandler(ctx context.Context, req *wfdv1.CancelHandlerRequest) (*wfdv1.CancelHandlerResponse, error) {
	if err := checkHandlerID(req.GetHandlerId()); err != nil {
		return nil, err
	}
	var live *engine.Handler
	err := v.rt.WithLive(ctx, req.GetHandlerId(), func(h *engine.Handler) error { live = h; return h.Cancel(ctx) })
	if err != nil {
		return nil, err
	}
	h, err := v.rt.AfterCommit(ctx, req.GetHandlerId(), live, nil)
	if err != nil {
		return nil, err
	}
	return &wfdv1.CancelHandlerResponse{Handler: h}, nil
}

func (v *Service) ReleaseHandler(ctx context.Context, req *wfdv1.ReleaseHandlerRequest) (*wfdv1.ReleaseHandlerResponse, error) {
	if err := checkHandlerID(req.GetHandlerId()); err != nil {
		return nil, err
	}
	id := req.GetHandlerId()
	if h, ok := v.engine.Handler(id); ok {
		if _, err := h.Release(ctx); err != nil && !errors.Is(err, engine.ErrReleased) {
			return nil, err
		}
	} else if err := v.replica.Elsewhere(ctx, id); err != nil {
		return nil, err // live on another replica: released there
	}
	meta, err := v.rt.Meta(ctx, id)
	if err != nil {
		return nil, err
	}
	if meta.Status != persistence.StatusRunning {
		return nil, live.ErrDone(id, meta.Status)
	}
	return &wfdv1.ReleaseHandlerResponse{Handler: v.rt.View(&meta)}, nil
}

// queuedFilter tells the handlers a listing by statuses keeps apart from
// the store's filter: the store knows a queued handler as running, so a
// listing of QUEUED without RUNNING (or the other way round) filters its
// page, which may then hold fewer than page_size.
func queuedFilter(statuses []wfdv1.HandlerStatus) func(*wfdv1.Handler) bool {
	q := slices.Contains(statuses, wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED)
	r := slices.Contains(statuses, wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING)
	switch {
	case q && !r:
		return func(h *wfdv1.Handler) bool {
			return h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING
		}
	case r && !q:
		return func(h *wfdv1.Handler) bool { return h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED }
	}
	return func(*wfdv1.Handler) bool { return true }
}
