package workers

// Workers and replicas (replica mode; docs/ARCHITECTURE.md "Workers and
// replicas"): a worker connects to one replica, and the work of its
// workflows goes there. Each replica advertises in the database the
// definitions its connected workers serve (persistence.WorkerRoutes),
// written when a worker connects or goes. Then:
//
//   - a replica about to bring a handler of a worker-defined workflow into
//     memory (a RunWorkflow, a load for a call, a timer, recovery) while
//     no worker of its definition is connected here but one is on another
//     live replica does not: the call is refused with an apierr.Owned naming
//     that replica, which the forwarder forwards there;
//   - a handler here whose runs wait for a worker that is not here but on
//     another live replica is handed over: it leaves memory without
//     committing (its runs stay in progress in its checkpoint, as at a
//     drain) and its lease is freed;
//   - a replica with workers loads the busy handlers of their workflows
//     that no replica holds (handed over, or left by a replica that shut
//     down or died), so their runs reach its workers.
//
// A single process has none of it: routeDB is nil and every function
// returns at once.

import (
	"cmp"
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// routeEvery is how often a replica looks for handlers to hand over and
// stranded handlers to load, and retries a failed advertisement.
const routeEvery = time.Second

// strandedBatch bounds the stranded handlers one look loads.
const strandedBatch = 64

// routeDB is the store's worker routes in replica mode, nil otherwise.
func (r *Registry) routeDB() persistence.WorkerRoutes {
	return r.routes
}

// served lists the versions the connected workers serve, and those of
// plus (a worker about to connect). A route's Hash is the version.
func (r *Registry) served(plus []ref) []persistence.ServedWorkflow {
	r.mu.Lock()
	defer r.mu.Unlock()
	set := map[persistence.ServedWorkflow]struct{}{}
	for _, v := range plus {
		set[persistence.ServedWorkflow{Workflow: v.workflow, Hash: v.version}] = struct{}{}
	}
	for _, w := range r.workers {
		for _, v := range w.serves {
			set[persistence.ServedWorkflow{Workflow: v.workflow, Hash: v.version}] = struct{}{}
		}
	}
	out := make([]persistence.ServedWorkflow, 0, len(set))
	for sw := range set {
		out = append(out, sw)
	}
	slices.SortFunc(out, func(a, b persistence.ServedWorkflow) int {
		return cmp.Or(cmp.Compare(a.Workflow, b.Workflow), cmp.Compare(a.Hash, b.Hash))
	})
	return out
}

// localServes says whether a connected worker serves that version.
func (r *Registry) localServes(workflow, version string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.workers {
		if w.serving(workflow, version) {
			return true
		}
	}
	return false
}

// advertise writes what the connected workers serve (and plus: see
// served), if it changed since the last successful write (or that
// failed). Writes are serialized, so the last one written is the latest
// state.
func (r *Registry) advertise(ctx context.Context, plus []ref) {
	db := r.routeDB()
	if db == nil {
		return
	}
	r.advMu.Lock()
	defer r.advMu.Unlock()
	served := r.served(plus)
	if !r.advDirty && slices.Equal(served, r.advertised) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.replica.LeaseTTL())
	defer cancel()
	if err := db.AdvertiseWorkflows(ctx, r.replica.ID(), served); err != nil {
		// Retried by the next look (RouteLoop).
		r.advDirty = true
		r.log.Warn("advertising the workflows of connected workers", "replica", r.replica.ID(), "err", err)
		return
	}
	r.advertised, r.advDirty = served, false
}

// KickRoutes asks RouteLoop to look now (a worker went, a run waits).
func (r *Registry) KickRoutes() {
	select {
	case r.routeKick <- struct{}{}:
	default:
	}
}

// RouteLoop advertises, hands over and adopts until ctx ends.
func (r *Registry) RouteLoop(ctx context.Context) {
	if r.routeDB() == nil {
		return
	}
	t := time.NewTicker(routeEvery)
	defer t.Stop()
	for {
		r.advertise(ctx, nil)
		if !r.draining() {
			r.handOverWaiting(ctx)
			r.adoptStranded(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.routeKick:
		}
	}
}

// routeFor is the replica whose workers serve the definition when no
// connected worker here does, as an apierr.Owned for handler id (nil: the
// work stays here). Among several such replicas key picks one.
func (r *Registry) routeFor(ctx context.Context, id, workflow, hash, key string) *apierr.Owned {
	db := r.routeDB()
	if db == nil || r.localServes(workflow, hash) {
		return nil
	}
	rs, err := db.WorkflowRoutes(ctx)
	if err != nil {
		// The work stays here and waits for a worker, as without routes.
		r.log.Warn("reading where workers are connected", "workflow", workflow, "err", err)
		return nil
	}
	return pickRoute(rs, r.replica.ID(), id, workflow, hash, key)
}

// pickRoute is, among the routes of other replicas serving the
// definition, the one key hashes to (nil for none).
func pickRoute(rs []persistence.WorkflowRoute, self, id, workflow, hash, key string) *apierr.Owned {
	var cands []persistence.WorkflowRoute
	for _, rt := range rs {
		if rt.Replica != self && rt.Workflow == workflow && rt.Hash == hash {
			cands = append(cands, rt)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	f := fnv.New32a()
	_, _ = f.Write([]byte(key))
	rt := cands[int(f.Sum32()%uint32(len(cands)))]
	return &apierr.Owned{Handler: id, Owner: rt.Replica, Address: rt.Address, Workflow: workflow}
}

// RouteStart is where a RunWorkflow of workflow goes: an apierr.Owned
// naming a replica with its workers when it is worker-defined and no
// worker of it is connected here. A workflow another replica's worker
// defined becomes known here first. A forwarded start is never routed
// again: it starts here (and is handed over if no worker comes).
func (r *Registry) RouteStart(ctx context.Context, workflow, version, id string) error {
	if r.routeDB() == nil {
		return nil
	}
	hash, ok := r.definition(ctx, workflow, version)
	if !ok || r.replica.Forwarded(ctx) {
		return nil
	}
	key := id
	if key == "" {
		key = uuid.NewString()
	}
	if to := r.routeFor(ctx, id, workflow, hash, key); to != nil {
		return to
	}
	return nil
}

// RouteLoad is whether handler id of workflow, about to be loaded (its
// lease just acquired), is loaded here: an apierr.Owned naming a replica
// with its workers when it is worker-defined and no worker of it is
// connected here. The lease is freed before it returns, so that the call
// forwarded there finds it free. A workflow another replica's worker
// defined becomes known here first, so that the handler restores (rather
// than failing as of an unknown workflow).
func (r *Registry) RouteLoad(ctx context.Context, id, workflow, version string) error {
	if r.routeDB() == nil {
		return nil
	}
	hash, ok := r.definition(ctx, workflow, r.eng.PinnedVersion(workflow, version))
	if !ok {
		return nil
	}
	to := r.routeFor(ctx, id, workflow, hash, id)
	if to == nil {
		return nil
	}
	r.replica.ReleaseNow(ctx, id)
	return to
}

// ServedElsewhere says whether, in replica mode, no connected worker here
// serves version of workflow but one on another live replica does
// (live.Workers): a handler of it is better off there.
func (r *Registry) ServedElsewhere(ctx context.Context, workflow, version string) bool {
	if r.routeDB() == nil || r.localServes(workflow, version) {
		return false
	}
	return r.routeFor(ctx, "", workflow, version, workflow) != nil
}

// handOverWaiting hands over the handlers here whose runs wait for a
// worker that is not connected here but is to another live replica.
func (r *Registry) handOverWaiting(ctx context.Context) {
	type cand struct{ id, workflow, hash string }
	var cands []cand
	r.mu.Lock()
	for id, m := range r.waiting {
		for wr := range m {
			cands = append(cands, cand{id, wr.workflow, wr.version})
			break
		}
	}
	r.mu.Unlock()
	var routes []persistence.WorkflowRoute
	fetched := false
	for _, c := range cands {
		if r.localServes(c.workflow, c.hash) {
			continue
		}
		if !fetched {
			var err error
			if routes, err = r.routeDB().WorkflowRoutes(ctx); err != nil {
				if ctx.Err() == nil {
					r.log.Warn("reading where workers are connected", "err", err)
				}
				return
			}
			fetched = true
		}
		to := pickRoute(routes, r.replica.ID(), c.id, c.workflow, c.hash, c.id)
		if to == nil {
			continue
		}
		if r.rt.HandOver(ctx, c.id, to) {
			r.log.Info("handler handed over to the replica with its workers", "handler", c.id, "workflow", c.workflow, "to", to.Owner)
		}
	}
}

// adoptStranded loads the stranded handlers (busy, no live lease) of the
// workflows the connected workers serve.
func (r *Registry) adoptStranded(ctx context.Context) {
	var names []string
	for _, sw := range r.served(nil) {
		if !slices.Contains(names, sw.Workflow) {
			names = append(names, sw.Workflow)
		}
	}
	if len(names) == 0 {
		return
	}
	ids, err := r.routeDB().StrandedHandlers(ctx, names, strandedBatch)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("looking for stranded handlers of served workflows", "err", err)
		}
		return
	}
	for _, id := range ids {
		if _, live := r.eng.Handler(id); live {
			continue
		}
		// Another replica may take it first: its lease says so.
		if _, err := r.rt.Live(ctx, id); err != nil && ctx.Err() == nil && !errors.As(err, new(*apierr.Owned)) {
			r.log.Warn("loading a stranded handler of a served workflow", "handler", id, "err", err)
		}
	}
}
