package server

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
)

// service implements the RPCs. Every method returns errors through
// apierr.ToConnect, the one place that picks status codes.
type service struct {
	s *Server
}

var _ wfdv1connect.WorkflowServiceHandler = (*service)(nil)

func (v *service) ListWorkflows(ctx context.Context, _ *wfdv1.ListWorkflowsRequest) (*wfdv1.ListWorkflowsResponse, error) {
	// In replica mode, workflows workers defined on other replicas too.
	v.s.workers.syncStored(ctx)
	out := &wfdv1.ListWorkflowsResponse{}
	for _, w := range v.s.engine.Workflows() {
		p := live.WorkflowToProto(&w)
		p.ServedByWorkers, p.WorkersConnected = v.s.workers.serving(w.Name)
		out.Workflows = append(out.Workflows, p)
	}
	return out, nil
}

func (v *service) RunWorkflow(ctx context.Context, req *wfdv1.RunWorkflowRequest) (*wfdv1.RunWorkflowResponse, error) {
	h, err := v.s.run(ctx, req)
	if err != nil {
		return nil, err
	}
	if h, err = v.s.waitAfter(ctx, h, req.GetWait().AsDuration()); err != nil {
		return nil, err
	}
	return &wfdv1.RunWorkflowResponse{Handler: h}, nil
}

func (s *Server) run(ctx context.Context, req *wfdv1.RunWorkflowRequest) (*wfdv1.Handler, error) {
	if err := validateRun(req, s.payloadLimits()); err != nil {
		return nil, err
	}
	// In replica mode, a worker-defined workflow starts where its workers
	// are (workerroute.go).
	if err := s.workers.routeStart(ctx, req.GetWorkflow(), req.GetHandlerId()); err != nil {
		return nil, err
	}
	if _, ok := s.engine.Workflow(req.GetWorkflow()); !ok {
		return nil, fmt.Errorf("%w: %q", engine.ErrUnknownWorkflow, req.GetWorkflow())
	}
	id := req.GetHandlerId()
	if id != "" {
		// Calls with the same id take turns, so a repeat sees the first
		// call's handler once it is durable.
		unlock := s.turns.Lock(id)
		defer unlock()
		if h, err := s.existing(ctx, id, req.GetWorkflow()); h != nil || err != nil {
			return h, err
		}
	}
	if id == "" {
		// Named here rather than by the engine, so the journal can be
		// asked to keep the handler's first commit (watch).
		id = uuid.Must(uuid.NewV7()).String()
	}
	input := req.GetInput()
	if input == nil {
		input = &structpb.Struct{}
	}
	// In replica mode a new handler is this replica's by lease before
	// its first change.
	if err := s.leases.acquire(ctx, id); err != nil {
		return nil, err
	}
	if req.GetHandlerId() != "" && s.leases.id() != "" {
		// Read again under the lease: the read above may be older than a
		// start of the same id through another replica that committed
		// before its lease expired (this replica paused in between, say).
		if h, err := s.existing(ctx, id, req.GetWorkflow()); h != nil || err != nil {
			s.releaseUnused(id)
			return h, err
		}
	}
	w := s.journal.Watch(id)
	defer w.Done()
	defer s.tracing.During(ctx, id)()
	h, err := s.engine.Start(ctx, req.GetWorkflow(), input, engine.StartOptions{HandlerID: id})
	if err != nil {
		s.releaseUnused(id)
		return nil, err
	}
	return s.afterCommit(ctx, id, h, &w)
}

// afterCommit answers a call whose change to handler id is durable with
// the handler as the journal committed it (w, begun before the call),
// without reading it back; without a watch, or when the journal has no
// stream position for the handler (changes without records), it reads the
// store instead.
//
// The call's change is durable by now, so it must not answer with an
// error a client would take for "nothing happened" (and retry, creating a
// second handler): if the store cannot be read back, it answers from the
// engine's view of the handler h (when there is one).
func (s *Server) afterCommit(ctx context.Context, id string, h *engine.Handler, w *live.Watch) (*wfdv1.Handler, error) {
	if w != nil {
		if m, ok := w.Committed(); ok {
			return s.view(&m), nil
		}
	}
	p, err := s.get(ctx, id)
	if err == nil || h == nil {
		return p, err
	}
	info, ierr := h.Info(ctx)
	if ierr != nil {
		return nil, err
	}
	s.log.Warn("reading a handler back after a durable change failed; answering from memory", "handler", id, "err", err)
	return live.InfoToProto(info), nil
}

// existing returns the stored handler with that id if it runs the same
// workflow, ALREADY_EXISTS if it runs another, and nothing if there is none.
func (s *Server) existing(ctx context.Context, id, workflow string) (*wfdv1.Handler, error) {
	meta, err := s.meta(ctx, id)
	if errors.Is(err, apierr.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if meta.Workflow != workflow {
		return nil, fmt.Errorf("%w: handler %s runs workflow %q, not %q", apierr.ErrAlreadyExists, id, meta.Workflow, workflow)
	}
	return s.view(&meta), nil
}

// view is the API view of a handler's stored metadata with what only
// memory knows: its runs waiting for a worker.
func (s *Server) view(m *persistence.Handler) *wfdv1.Handler {
	p := live.HandlerToProto(m)
	if m.Status == persistence.StatusRunning {
		p.WaitingForWorker = s.workers.waitingFor(m.ID)
		if _, held := s.leases.fence(m.ID); held {
			p.Owner = s.leases.id()
		}
	}
	return p
}

func (s *Server) get(ctx context.Context, id string) (*wfdv1.Handler, error) {
	meta, err := s.meta(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.view(&meta), nil
}

func (v *service) GetHandler(ctx context.Context, req *wfdv1.GetHandlerRequest) (*wfdv1.GetHandlerResponse, error) {
	if err := checkHandlerID(req.GetHandlerId()); err != nil {
		return nil, err
	}
	h, err := v.s.get(ctx, req.GetHandlerId())
	if err != nil {
		return nil, err
	}
	v.s.leases.fillOwners(ctx, []*wfdv1.Handler{h}) // another replica's, or none
	return &wfdv1.GetHandlerResponse{Handler: h}, nil
}

func (v *service) ListHandlers(ctx context.Context, req *wfdv1.ListHandlersRequest) (*wfdv1.ListHandlersResponse, error) {
	if err := validateList(req); err != nil {
		return nil, err
	}
	q := persistence.Query{
		Workflow: req.GetWorkflow(), IdleOnly: req.GetIdleOnly(), Residency: persistence.Residency(req.GetResidency()),
		PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken(), Now: v.s.opts.Now(),
	}
	for _, st := range req.GetStatuses() {
		q.Statuses = append(q.Statuses, persistence.Status(st))
	}
	if d := req.GetIdleFor(); d != nil {
		q.IdleFor = d.AsDuration()
	}
	hs, next, err := v.s.store.ListHandlers(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &wfdv1.ListHandlersResponse{NextPageToken: next, Handlers: make([]*wfdv1.Handler, len(hs))}
	for i := range hs {
		out.Handlers[i] = v.s.view(&hs[i])
	}
	v.s.leases.fillOwners(ctx, out.Handlers)
	return out, nil
}

func (v *service) SendEvent(ctx context.Context, req *wfdv1.SendEventRequest) (*wfdv1.SendEventResponse, error) {
	if err := validateSend(req, v.s.payloadLimits()); err != nil {
		return nil, err
	}
	ev := engine.Event{Type: req.GetEvent().GetType(), Data: req.GetEvent().GetData()}
	id, key := req.GetHandlerId(), req.GetIdempotencyKey()
	opts := engine.SendOptions{IdempotencyKey: key}
	// What the engine refuses of any event (a reserved type, say) is
	// refused before the handler's state is looked at.
	if err := v.s.engine.CheckEvent(ev, opts); err != nil {
		return nil, err
	}
	w := v.s.journal.Watch(id)
	defer w.Done()
	committed := &w
	var live *engine.Handler
	err := v.s.withLiveFor(ctx, id, &ev, func(h *engine.Handler) error { live = h; return h.SendEvent(ctx, ev, opts) })
	if key != "" && (errors.Is(err, engine.ErrHandlerDone) || errors.Is(err, engine.ErrInvalidEvent)) && v.s.tookKey(ctx, id, key) {
		// A retry of an event the handler took (one that finished it, or
		// one it no longer waits for): acknowledge it, deliver nothing.
		err, live, committed = nil, nil, nil
	}
	if err != nil {
		return nil, err
	}
	h, err := v.s.afterCommit(ctx, id, live, committed)
	if err != nil {
		return nil, err
	}
	if h, err = v.s.waitAfter(ctx, h, req.GetWait().AsDuration()); err != nil {
		return nil, err
	}
	return &wfdv1.SendEventResponse{Handler: h}, nil
}

// withLive runs fn on the in-memory handler, loading it if needed. If the
// handler leaves memory between the lookup and fn (a release racing with
// the call), it is loaded again and fn retried, so nothing is lost. Each
// lap means another release won the race, which a crowded machine can
// make happen several times in a row: the bound only stops a call that
// could never win (the caller's deadline ends it sooner, if it has one).
func (s *Server) withLive(ctx context.Context, id string, fn func(*engine.Handler) error) error {
	return s.withLiveFor(ctx, id, nil, fn)
}

// withLiveFor is withLive for a call that brings the event accepting from
// outside: a handler not in memory that would refuse it is not loaded
// (liveFor).
func (s *Server) withLiveFor(ctx context.Context, id string, accepting *engine.Event, fn func(*engine.Handler) error) error {
	// The call's span (SendEvent, CompleteTask, PublishEvent, ...) is the
	// parent of what the handler does meanwhile: rehydration, step runs,
	// commits.
	defer s.tracing.During(ctx, id)()
	for range maxReleaseRaces {
		h, err := s.liveFor(ctx, id, accepting)
		if err != nil {
			return err
		}
		err = fn(h)
		if errors.Is(err, engine.ErrReleased) {
			continue
		}
		return err
	}
	return fmt.Errorf("%w: handler %s keeps leaving memory; try again", engine.ErrClosed, id)
}

// maxReleaseRaces bounds how often withLive loads a handler that a
// release takes away again before the call is done with it.
const maxReleaseRaces = 100

func (v *service) CancelHandler(ctx context.Context, req *wfdv1.CancelHandlerRequest) (*wfdv1.CancelHandlerResponse, error) {
	if err := checkHandlerID(req.GetHandlerId()); err != nil {
		return nil, err
	}
	var live *engine.Handler
	err := v.s.withLive(ctx, req.GetHandlerId(), func(h *engine.Handler) error { live = h; return h.Cancel(ctx) })
	if err != nil {
		return nil, err
	}
	h, err := v.s.afterCommit(ctx, req.GetHandlerId(), live, nil)
	if err != nil {
		return nil, err
	}
	return &wfdv1.CancelHandlerResponse{Handler: h}, nil
}

func (v *service) ReleaseHandler(ctx context.Context, req *wfdv1.ReleaseHandlerRequest) (*wfdv1.ReleaseHandlerResponse, error) {
	if err := checkHandlerID(req.GetHandlerId()); err != nil {
		return nil, err
	}
	id := req.GetHandlerId()
	if h, ok := v.s.engine.Handler(id); ok {
		if _, err := h.Release(ctx); err != nil && !errors.Is(err, engine.ErrReleased) {
			return nil, err
		}
	} else if err := v.s.leases.elsewhere(ctx, id); err != nil {
		return nil, err // live on another replica: released there
	}
	meta, err := v.s.meta(ctx, id)
	if err != nil {
		return nil, err
	}
	if meta.Status != persistence.StatusRunning {
		return nil, errDone(id, meta.Status)
	}
	return &wfdv1.ReleaseHandlerResponse{Handler: v.s.view(&meta)}, nil
}

// meta reads a handler's stored metadata; an unknown id is apierr.ErrNotFound.
func (s *Server) meta(ctx context.Context, id string) (persistence.Handler, error) {
	h, err := s.store.GetHandler(ctx, id)
	if errors.Is(err, persistence.ErrNotFound) {
		return h, fmt.Errorf("handler %q %w", id, apierr.ErrNotFound)
	}
	return h, err
}

// errDone is the error for a call that needs a running handler.
func errDone(id string, st persistence.Status) error {
	return &engine.HandlerDoneError{HandlerID: id, Status: st}
}

// tookKey reports whether the handler's last checkpoint lists the
// idempotency key among the events it took.
func (s *Server) tookKey(ctx context.Context, id, key string) bool {
	if s.journal.Settled(ctx, id) != nil {
		return false
	}
	raw, err := s.store.LoadSnapshot(ctx, id)
	if err != nil {
		return false
	}
	var st statev1.HandlerState
	if proto.Unmarshal(raw, &st) != nil {
		return false
	}
	return slices.Contains(st.GetEventKeys(), key)
}
