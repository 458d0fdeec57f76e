package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"

	"github.com/wfd-dev/wfd/engine"
)

// workerRegistry holds the connected step workers, the workflows they
// registered, and the runs dispatched to them (docs/ARCHITECTURE.md "Step workers").
// A worker is connected while its Connect stream is open.
type workerRegistry struct {
	s *Server

	mu      sync.Mutex
	workers map[string]*worker
	// defs are the hashes (encodeDefinition) of the definitions of the
	// workflows workers registered, by name: a worker may register a name
	// again only with an equal one.
	defs map[string]string
	runs map[string]*remoteRun
	// waiting holds the runs waiting for a worker, by handler id, for
	// the API's Handler.waiting_for_worker.
	waiting map[string]map[*waitingRun]struct{}
	// changed is closed (and replaced) when a worker connects or a run
	// frees capacity, to wake proxies waiting for a worker.
	changed chan struct{}
	next    int // round-robin start among equally loaded workers
	stats   dispatchStats

	// Replica mode (workerroute.go): what the connected workers serve as
	// last advertised (advMu serializes the writes; advDirty: the last
	// one failed, or none was made), and the wake-up of routeLoop.
	advMu      sync.Mutex
	advertised []persistence.ServedWorkflow
	advDirty   bool
	routeKick  chan struct{}
}

// worker is one connected worker.
type worker struct {
	id   string
	name string
	// subject is the authenticated subject it connected as ("" without
	// authentication): only it may make its runs' calls.
	subject   string
	maxRuns   int
	workflows []string
	// hashes are the definitions it registered, by workflow name: it is
	// given runs of handlers of those definitions only.
	hashes      map[string]string
	connectedAt time.Time
	// out carries what the Connect stream sends the worker; it is
	// buffered so a proxy never blocks on a slow stream for long.
	out chan *wfdv1.ConnectResponse
	// gone is closed when the stream ends: the worker's runs are
	// dispatched again.
	gone chan struct{}
	// runs counts the runs in progress on it (registry.mu).
	runs int
}

func newWorkerRegistry(s *Server) *workerRegistry {
	return &workerRegistry{s: s, workers: map[string]*worker{}, defs: map[string]string{},
		runs: map[string]*remoteRun{}, waiting: map[string]map[*waitingRun]struct{}{}, changed: make(chan struct{}),
		advDirty: true, routeKick: make(chan struct{}, 1)}
}

// wake tells waiting proxies that something changed. Callers hold r.mu.
func (r *workerRegistry) wake() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// addedDef is a definition a worker registers, checked: its workflow,
// its hash, and the hash of the definition it replaces, if any.
type addedDef struct {
	d        *wfdv1.WorkflowDefinition
	w        engine.Workflow
	hash     string
	replaces string
}

// checkDef checks a definition g registers, under r.mu; one already
// registered as it is comes back without a workflow (w.Name ""), claimed
// for g.
func (r *workerRegistry) checkDef(ctx context.Context, g registrant, d *wfdv1.WorkflowDefinition) (addedDef, error) {
	_, hash, err := encodeDefinition(d)
	if err != nil {
		return addedDef{}, fmt.Errorf("%w: %w", apierr.ErrInvalid, err)
	}
	a := addedDef{d: d, hash: hash}
	if oldHash, ok := r.defs[d.GetName()]; ok {
		if oldHash == hash {
			return a, r.claim(ctx, g, d.GetName(), hash)
		}
		if err := r.replaceable(ctx, d.GetName()); err != nil {
			return a, err
		}
		a.replaces = oldHash
	} else if _, ok := r.s.engine.Workflow(d.GetName()); ok {
		return a, fmt.Errorf("%w: workflow %q is built into the server", apierr.ErrFailedPrecondition, d.GetName())
	}
	w, err := r.workflowFromDefinition(d, hash)
	if err == nil {
		err = w.Validate()
	}
	if err != nil {
		return a, fmt.Errorf("%w: %w", apierr.ErrInvalid, err)
	}
	a.w = w
	return a, nil
}

// register registers the definitions of a connecting worker (source
// names it) with the engine and stores them, and returns their hashes by
// name. A name already registered is fine with an equal definition. A
// different one replaces it only while no handler of the workflow runs
// (none in memory, none released): a running handler's state belongs to
// the definition it started with, so replacing it under them could
// misroute their events; otherwise it is refused (FailedPrecondition).
// Runs go only to workers that registered the definition their handler
// runs (pick), so a worker still connected with the old definition gets
// none of the new one's. A definition that fails validation is
// InvalidArgument, with engine.Register's errors.
// With authentication on, g must own each workflow or hold a grant for
// it (workerowner.go): PermissionDenied otherwise.
func (r *workerRegistry) register(ctx context.Context, g registrant, defs []*wfdv1.WorkflowDefinition) (map[string]string, error) {
	r.refreshStored(ctx, defs)
	names := make([]string, 0, len(defs))
	for _, d := range defs {
		names = append(names, d.GetName())
	}
	owners, err := r.owners(ctx, g, names)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Everything is checked before anything is registered, so a refused
	// connect leaves nothing behind.
	hashes := map[string]string{}
	var todo []addedDef
	for _, d := range defs {
		if _, ok := hashes[d.GetName()]; ok {
			return nil, fmt.Errorf("%w: workflow %q is defined twice", apierr.ErrInvalid, d.GetName())
		}
		a, err := r.checkDef(ctx, g, d)
		if err != nil {
			return nil, err
		}
		hashes[d.GetName()] = a.hash
		if a.w.Name != "" {
			todo = append(todo, a)
		}
	}
	for _, a := range todo {
		if err := r.store(ctx, a.d, g, owners[a.d.GetName()], a.replaces); err != nil {
			return nil, err
		}
		register := r.s.engine.Register
		if a.replaces != "" {
			register = r.s.engine.Replace
			r.s.log.Info("workflow definition replaced", "workflow", a.d.GetName(), "worker", g.source, "subject", g.id.Subject, "hash", a.hash, "was", a.replaces)
		}
		if err := register(a.w); err != nil {
			return nil, fmt.Errorf("%w: %w", apierr.ErrInvalid, err)
		}
		r.defs[a.d.GetName()] = a.hash
	}
	return hashes, nil
}

// replaceable says whether the workflow's definition may be replaced:
// only while none of its handlers runs.
func (r *workerRegistry) replaceable(ctx context.Context, name string) error {
	hs, _, err := r.s.store.ListHandlers(ctx, persistence.Query{Workflow: name, Statuses: []persistence.Status{persistence.StatusRunning}, PageSize: 1})
	if err != nil {
		return fmt.Errorf("looking for running handlers of %q: %w", name, err)
	}
	if len(hs) > 0 {
		return fmt.Errorf("%w: workflow %q is registered with another definition and has running handlers (e.g. %s); "+
			"a changed definition replaces it only once none runs: let them finish or cancel them, or use a new name (e.g. %q)",
			apierr.ErrFailedPrecondition, name, hs[0].ID, name+"-v2")
	}
	return nil
}

// connect adds a worker that registered the definitions of hashes (by
// workflow name).
func (r *workerRegistry) connect(g registrant, maxRuns int, hashes map[string]string) *worker {
	names := slices.Sorted(maps.Keys(hashes))
	w := &worker{id: uuid.NewString(), name: g.source, subject: g.id.Subject, maxRuns: max(maxRuns, 1), workflows: names, hashes: hashes,
		connectedAt: r.s.opts.Now(), out: make(chan *wfdv1.ConnectResponse, 64), gone: make(chan struct{})}
	r.mu.Lock()
	r.workers[w.id] = w
	r.wake()
	r.mu.Unlock()
	return w
}

// disconnect removes a worker; its runs in progress go to others (in
// replica mode, to another replica if none here serves them).
func (r *workerRegistry) disconnect(w *worker) {
	r.mu.Lock()
	delete(r.workers, w.id)
	r.mu.Unlock()
	close(w.gone)
	r.advertise(context.Background(), nil)
	r.kickRoutes()
}

// waitingRun is a run waiting for a worker (Handler.waiting_for_worker).
type waitingRun struct {
	handlerID, step string
	// workflow and hash are the definition it needs (workerroute.go).
	workflow, hash string
	attempt        int
	since          time.Time
}

// pick returns a worker with free capacity that serves workflow (the
// least loaded; ties round-robin) that registered the definition of that
// hash, and takes one of its slots, waiting
// until there is one or ctx ends. Before it first waits (unless the
// server is draining) it lists wr as waiting and calls blocked(true);
// once it stops waiting it unlists wr and calls blocked(false), so the
// handler shows the wait.
func (r *workerRegistry) pick(ctx context.Context, workflow, hash string, wr *waitingRun, blocked func(bool)) (*worker, error) {
	waited := false
	defer func() {
		if waited {
			r.unlistWaiting(wr)
			blocked(false)
		}
	}()
	for {
		r.mu.Lock()
		var best *worker
		ids := make([]string, 0, len(r.workers))
		for id := range r.workers {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for i := range ids {
			w := r.workers[ids[(i+r.next)%len(ids)]]
			if w.runs >= w.maxRuns || w.hashes[workflow] != hash {
				continue
			}
			if best == nil || w.runs < best.runs {
				best = w
			}
		}
		if r.s.shutdown.isDraining() {
			// Shutting down: a run dispatched now would hold the drain;
			// the run is taken up again after the restart.
			best = nil
		}
		if best != nil {
			best.runs++
			r.next++
			r.mu.Unlock()
			return best, nil
		}
		ch := r.changed
		if !waited && !r.s.shutdown.isDraining() {
			waited = true
			wr.since = r.s.opts.Now()
			m := r.waiting[wr.handlerID]
			if m == nil {
				m = map[*waitingRun]struct{}{}
				r.waiting[wr.handlerID] = m
			}
			m[wr] = struct{}{}
			r.mu.Unlock()
			blocked(true)
			r.kickRoutes() // a worker of it may be on another replica
			continue       // look again: a worker may have come meanwhile
		}
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.s.engine.Closing():
			return nil, fmt.Errorf("no worker took the run before the server stopped: %w", engine.ErrInterrupted)
		}
	}
}

func (r *workerRegistry) unlistWaiting(wr *waitingRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.waiting[wr.handlerID]
	delete(m, wr)
	if len(m) == 0 {
		delete(r.waiting, wr.handlerID)
	}
}

// waitingFor lists a handler's runs waiting for a worker.
func (r *workerRegistry) waitingFor(handlerID string) []*wfdv1.RunWaitingForWorker {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.waiting[handlerID]
	if len(m) == 0 {
		return nil
	}
	out := make([]*wfdv1.RunWaitingForWorker, 0, len(m))
	for wr := range m {
		out = append(out, &wfdv1.RunWaitingForWorker{Step: wr.step, Attempt: uint32(wr.attempt), Waiting: true, Since: timestamppb.New(wr.since)})
	}
	slices.SortFunc(out, func(a, b *wfdv1.RunWaitingForWorker) int { return a.GetSince().AsTime().Compare(b.GetSince().AsTime()) })
	return out
}

// serving says whether workers define the workflow, and how many
// connected ones serve its current definition.
func (r *workerRegistry) serving(workflow string) (bool, int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hash, ok := r.defs[workflow]
	if !ok {
		return false, 0
	}
	var n int32
	for _, w := range r.workers {
		if w.hashes[workflow] == hash {
			n++
		}
	}
	return true, n
}

// release gives back a slot pick took.
func (r *workerRegistry) release(w *worker) {
	r.mu.Lock()
	w.runs--
	r.wake()
	r.mu.Unlock()
}

// run returns the run of that id if it is workerID's, and the caller of
// ctx is that worker's subject (PermissionDenied otherwise).
func (r *workerRegistry) run(ctx context.Context, runID, workerID string) (*remoteRun, error) {
	r.mu.Lock()
	run, ok := r.runs[runID]
	r.mu.Unlock()
	if !ok || run.worker.id != workerID {
		return nil, fmt.Errorf("%w: run %q is not (or no longer) this worker's", apierr.ErrFailedPrecondition, runID)
	}
	if err := sameSubject(ctx, run.worker); err != nil {
		return nil, err
	}
	return run, nil
}

// list describes the connected workers, for ListWorkers.
func (r *workerRegistry) list() []*wfdv1.WorkerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	byWorker := map[string]*wfdv1.WorkerInfo{}
	var out []*wfdv1.WorkerInfo
	for _, w := range r.workers {
		wi := &wfdv1.WorkerInfo{WorkerId: w.id, Name: w.name, Workflows: w.workflows, MaxRuns: int32(w.maxRuns),
			ConnectedAt: timestamppb.New(w.connectedAt)}
		byWorker[w.id] = wi
		out = append(out, wi)
	}
	for _, run := range r.runs {
		if wi := byWorker[run.worker.id]; wi != nil {
			wi.Runs = append(wi.Runs, &wfdv1.RunInfo{RunId: run.id, HandlerId: run.handlerID, Step: run.step, Since: timestamppb.New(run.since)})
		}
	}
	slices.SortFunc(out, func(a, b *wfdv1.WorkerInfo) int {
		return a.ConnectedAt.AsTime().Compare(b.ConnectedAt.AsTime())
	})
	return out
}

// workerService implements wfd.v1.WorkerService.
type workerService struct{ s *Server }

// Connect registers a worker and streams it its runs until it goes.
func (v *workerService) Connect(ctx context.Context, req *wfdv1.ConnectRequest, out *connect.ServerStream[wfdv1.ConnectResponse]) error {
	s := v.s
	if req.GetMaxRuns() < 0 {
		return fmt.Errorf("%w: max_runs %d is negative", apierr.ErrInvalid, req.GetMaxRuns())
	}
	g := registrantOf(ctx, req.GetName())
	hashes, err := s.workers.register(ctx, g, req.GetWorkflows())
	if err != nil {
		if errors.Is(err, apierr.ErrPermissionDenied) {
			s.log.Info("worker refused", "name", g.source, "subject", g.id.Subject, "err", err)
		}
		return err
	}
	// Other replicas learn of it before it is listed (ListWorkers) or told
	// it is connected, so work started anywhere from then on comes here.
	s.workers.advertise(ctx, hashes)
	w := s.workers.connect(g, int(req.GetMaxRuns()), hashes)
	defer s.workers.disconnect(w)
	s.log.Info("worker connected", "worker", w.id, "name", w.name, "subject", w.subject, "workflows", w.workflows, "max_runs", w.maxRuns)
	defer s.log.Info("worker disconnected", "worker", w.id, "name", w.name, "subject", w.subject)
	if err := out.Send(&wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_Connected{Connected: &wfdv1.Connected{WorkerId: w.id}}}); err != nil {
		return err
	}
	heartbeat := time.NewTicker(s.opts.Heartbeat)
	defer heartbeat.Stop()
	for {
		var m *wfdv1.ConnectResponse
		select {
		case m = <-w.out:
		case <-heartbeat.C:
			m = &wfdv1.ConnectResponse{Kind: &wfdv1.ConnectResponse_Heartbeat{Heartbeat: &wfdv1.Heartbeat{}}}
		case <-ctx.Done():
			return ctx.Err()
		case <-s.shutdown.draining:
			// The worker reconnects to the next server. Its runs cannot
			// finish here (http.Server.Shutdown lets no new call in): their
			// proxies leave them in progress once the engine closes
			// (ErrInterrupted), and they run again after the restart.
			return errShuttingDown()
		}
		if err := out.Send(m); err != nil {
			return err
		}
		heartbeat.Reset(s.opts.Heartbeat)
	}
}

// StepCall executes one context operation of a run on its StepContext.
func (v *workerService) StepCall(ctx context.Context, req *wfdv1.StepCallRequest) (*wfdv1.StepCallResponse, error) {
	run, err := v.s.workers.run(ctx, req.GetRunId(), req.GetWorkerId())
	if err != nil {
		return nil, err
	}
	resp, err := run.call(ctx, req)
	return resp, err
}

// FinishRun ends a run.
func (v *workerService) FinishRun(ctx context.Context, req *wfdv1.FinishRunRequest) (*wfdv1.FinishRunResponse, error) {
	run, err := v.s.workers.run(ctx, req.GetRunId(), req.GetWorkerId())
	if err != nil {
		return nil, err
	}
	if err := run.finish(ctx, req); err != nil {
		return nil, err
	}
	return &wfdv1.FinishRunResponse{}, nil
}

// ListWorkers lists the connected workers.
func (v *workerService) ListWorkers(context.Context, *wfdv1.ListWorkersRequest) (*wfdv1.ListWorkersResponse, error) {
	return &wfdv1.ListWorkersResponse{Workers: v.s.workers.list()}, nil
}
