package workers

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"

	"github.com/wfd-dev/wfd/engine"
)

// Registry holds the connected step workers, the workflows they
// registered, and the runs dispatched to them (docs/ARCHITECTURE.md "Step workers").
// A worker is connected while its Connect stream is open.
type Registry struct {
	opts    Options
	log     *slog.Logger
	db      persistence.Store
	replica Replica
	// routes are the store's worker routes in replica mode, nil otherwise.
	routes persistence.WorkerRoutes
	// rt and eng are the runtime's (Attach).
	rt  *live.Runtime
	eng *engine.Engine

	mu      sync.Mutex
	workers map[string]*worker
	// defs are the versions of the workflows workers registered, by name
	// then version: the hash of each (encodeDefinition), so that a version
	// is registered again only with an equal definition.
	defs map[string]map[string]string
	runs map[string]*remoteRun
	// waiting holds the runs waiting for a worker, by handler id, for
	// the API's Handler.waiting_for_worker.
	waiting map[string]map[*waitingRun]struct{}
	// changed is closed (and replaced) when a worker connects or a run
	// frees capacity, to wake proxies waiting for a worker.
	changed chan struct{}
	next    int // round-robin start among equally loaded workers
	stats   dispatchStats

	// Replica mode: what the connected workers serve as
	// last advertised (advMu serializes the writes; advDirty: the last
	// one failed, or none was made), and the wake-up of RouteLoop.
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
	// serves are the versions it registered: it is given runs of handlers
	// of those only.
	serves      []ref
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

// ref names a version of a workflow.
type ref struct{ workflow, version string }

func (v ref) String() string { return v.workflow + "@" + v.version }

// serving says whether w registered that version of workflow.
func (w *worker) serving(workflow, version string) bool {
	return slices.Contains(w.serves, ref{workflow, version})
}

// wake tells waiting proxies that something changed. Callers hold r.mu.
func (r *Registry) wake() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// connect adds a worker that registered the versions serves.
func (r *Registry) connect(g registrant, maxRuns int, serves []ref) *worker {
	var names []string
	for _, v := range serves {
		names = append(names, v.workflow)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	w := &worker{id: uuid.NewString(), name: g.source, subject: g.id.Subject, maxRuns: max(maxRuns, 1), workflows: names, serves: serves,
		connectedAt: r.opts.Now(), out: make(chan *wfdv1.ConnectResponse, 64), gone: make(chan struct{})}
	r.mu.Lock()
	r.workers[w.id] = w
	r.wake()
	r.mu.Unlock()
	return w
}

// disconnect removes a worker; its runs in progress go to others (in
// replica mode, to another replica if none here serves them).
func (r *Registry) disconnect(w *worker) {
	r.mu.Lock()
	delete(r.workers, w.id)
	r.mu.Unlock()
	close(w.gone)
	r.advertise(context.Background(), nil)
	r.KickRoutes()
}

// waitingRun is a run waiting for a worker (Handler.waiting_for_worker).
type waitingRun struct {
	handlerID, step string
	// workflow and version are what it needs a worker to serve.
	workflow, version string
	attempt           int
	since             time.Time
}

// pick returns a worker with free capacity that serves that version of
// workflow (the least loaded; ties round-robin), and takes one of its
// slots, waiting
// until there is one or ctx ends. Before it first waits (unless the
// server is draining) it lists wr as waiting and calls blocked(true);
// once it stops waiting it unlists wr and calls blocked(false), so the
// handler shows the wait.
func (r *Registry) pick(ctx context.Context, workflow, version string, wr *waitingRun, blocked func(waiting, noneConnected bool)) (*worker, error) {
	waited := false
	defer func() {
		if waited {
			r.unlistWaiting(wr)
			blocked(false, false)
		}
	}()
	for {
		r.mu.Lock()
		var best *worker
		serving := false
		ids := make([]string, 0, len(r.workers))
		for id := range r.workers {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for i := range ids {
			w := r.workers[ids[(i+r.next)%len(ids)]]
			if !w.serving(workflow, version) {
				continue
			}
			serving = true
			if w.runs >= w.maxRuns {
				continue
			}
			if best == nil || w.runs < best.runs {
				best = w
			}
		}
		if r.draining() {
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
		if !waited && !r.draining() {
			waited = true
			wr.since = r.opts.Now()
			m := r.waiting[wr.handlerID]
			if m == nil {
				m = map[*waitingRun]struct{}{}
				r.waiting[wr.handlerID] = m
			}
			m[wr] = struct{}{}
			r.mu.Unlock()
			blocked(true, !serving)
			r.KickRoutes() // a worker of it may be on another replica
			continue       // look again: a worker may have come meanwhile
		}
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.eng.Closing():
			return nil, fmt.Errorf("no worker took the run before the server stopped: %w", engine.ErrInterrupted)
		}
	}
}

// servedLocked reports whether a connected worker serves that version of
// workflow. r.mu is held.
func (r *Registry) servedLocked(workflow, version string) bool {
	for _, w := range r.workers {
		if w.serving(workflow, version) {
			return true
		}
	}
	return false
}

func (r *Registry) unlistWaiting(wr *waitingRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.waiting[wr.handlerID]
	delete(m, wr)
	if len(m) == 0 {
		delete(r.waiting, wr.handlerID)
	}
}

// WaitingFor lists a handler's runs waiting for a worker.
func (r *Registry) WaitingFor(handlerID string) []*wfdv1.RunWaitingForWorker {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.waiting[handlerID]
	if len(m) == 0 {
		return nil
	}
	out := make([]*wfdv1.RunWaitingForWorker, 0, len(m))
	for wr := range m {
		out = append(out, &wfdv1.RunWaitingForWorker{Step: wr.step, Attempt: uint32(wr.attempt), Waiting: true, Since: timestamppb.New(wr.since),
			WorkflowVersion: wr.version, NoneConnected: !r.servedLocked(wr.workflow, wr.version)})
	}
	slices.SortFunc(out, func(a, b *wfdv1.RunWaitingForWorker) int { return a.GetSince().AsTime().Compare(b.GetSince().AsTime()) })
	return out
}

// Serving says whether workers define the workflow, and how many
// connected ones serve version ("": the current one).
func (r *Registry) Serving(workflow, version string) (bool, int32) {
	names, ok := r.ServedBy(workflow, version)
	return ok, int32(len(names))
}

// ServedBy names the connected workers that serve version of workflow
// ("": the current one), sorted, and says whether workers define it.
func (r *Registry) ServedBy(workflow, version string) ([]string, bool) {
	if version == "" {
		w, _ := r.eng.Workflow(workflow)
		version = w.Version
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.defs[workflow]
	var names []string
	for _, w := range r.workers {
		if w.serving(workflow, version) {
			names = append(names, w.name)
		}
	}
	slices.Sort(names)
	return names, ok
}

// release gives back a slot pick took.
func (r *Registry) release(w *worker) {
	r.mu.Lock()
	w.runs--
	r.wake()
	r.mu.Unlock()
}

// run returns the run of that id if it is workerID's, and the caller of
// ctx is that worker's subject (PermissionDenied otherwise).
func (r *Registry) run(ctx context.Context, runID, workerID string) (*remoteRun, error) {
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
func (r *Registry) list() []*wfdv1.WorkerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	byWorker := map[string]*wfdv1.WorkerInfo{}
	var out []*wfdv1.WorkerInfo
	for _, w := range r.workers {
		wi := &wfdv1.WorkerInfo{WorkerId: w.id, Name: w.name, Workflows: w.workflows, MaxRuns: int32(w.maxRuns),
			ConnectedAt: timestamppb.New(w.connectedAt)}
		for _, v := range w.serves {
			wi.Versions = append(wi.Versions, v.String())
		}
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
