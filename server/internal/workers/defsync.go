package workers

// Worker-defined definitions across replicas (replica mode; see
// docs/ARCHITECTURE.md "Workers and replicas"): the stored definition is
// the truth, and a replica reads it where it uses one. A start (RunWorkflow,
// StartChild) or a load of a handler of a worker-defined workflow reads
// the stored definition (one primary-key read) and registers it here if it
// is new here or was replaced by another replica; ListWorkflows lists from
// the store. So a replacement committed on one replica is what every
// replica starts next, with no window and nothing to miss while a
// notification is in flight or a listener reconnects.

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/persistence"
)

// registerStored registers a stored definition with the engine, in place
// of the one registered under its name if there is one (engine.Replace:
// handlers in memory keep theirs); false if it cannot be (said in the
// log). Callers hold r.mu.
func (r *Registry) registerStored(sd persistence.WorkflowDef) bool {
	d := &wfdv1.WorkflowDefinition{}
	if err := proto.Unmarshal(sd.Def, d); err != nil {
		r.log.Error("stored workflow definition cannot be decoded", "workflow", sd.Name, "err", err)
		return false
	}
	register := r.eng.Register
	if _, ok := r.defs[d.GetName()]; ok {
		register = r.eng.Replace
	}
	w, err := r.workflowFromDefinition(d, sd.Hash)
	if err == nil {
		err = register(w)
	}
	if err != nil {
		// A built-in workflow of that name now, or stricter validation:
		// say so, and serve the rest.
		r.log.Error("stored workflow definition not registered", "workflow", sd.Name, "err", err)
		return false
	}
	r.defs[d.GetName()] = sd.Hash
	return true
}

// adopt makes sd the definition registered here under its name unless it
// already is (same hash). Callers hold r.mu.
func (r *Registry) adopt(sd persistence.WorkflowDef) bool {
	if hash, ok := r.defs[sd.Name]; ok && hash == sd.Hash {
		return true
	}
	return r.registerStored(sd)
}

// definition is the hash of workflow name's definition if workers define
// it (false: built in, or unknown). In replica mode it is the stored one:
// a worker on another replica may have defined the workflow since this
// replica started, or replaced its definition; it is registered here
// first, so that its handlers start and restore here with it (rather than
// failing as of an unknown workflow, or running a replaced definition no
// worker serves) and its calls are routed by its hash. If the store
// cannot be read, it is what is registered here.
func (r *Registry) definition(ctx context.Context, name string) (string, bool) {
	r.mu.Lock()
	hash, known := r.defs[name]
	r.mu.Unlock()
	if r.routeDB() == nil {
		return hash, known
	}
	if _, builtIn := r.eng.Workflow(name); builtIn && !known {
		return "", false
	}
	// Read outside r.mu: dispatches take it, and must not wait for the
	// database.
	sd, err := r.db.GetWorkflow(ctx, name, "")
	if err != nil {
		if !errors.Is(err, persistence.ErrNotFound) && !errors.Is(err, persistence.ErrInvalid) {
			r.log.Warn("reading a stored workflow definition", "workflow", name, "err", err)
		}
		return hash, known
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.adopt(sd) {
		hash, known := r.defs[name]
		return hash, known
	}
	if sd.Hash != hash {
		r.log.Info("workflow definition registered as stored by a worker of another replica", "workflow", name, "hash", sd.Hash, "was", hash)
	}
	return sd.Hash, true
}

// SyncStored registers here, in replica mode, every stored definition
// that is new here or was replaced by another replica (ListWorkflows:
// every replica lists the same workflows). Errors are logged: what is
// registered here is listed.
func (r *Registry) SyncStored(ctx context.Context) {
	if r.routeDB() == nil {
		return
	}
	defs, err := r.db.ListWorkflowDefs(ctx)
	if err != nil {
		r.log.Warn("listing stored workflow definitions", "err", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sd := range defs {
		if _, builtIn := r.eng.Workflow(sd.Name); builtIn && r.defs[sd.Name] == "" {
			continue // said at start-up
		}
		r.adopt(sd)
	}
}

// refreshStored brings the definitions of names up to the stored ones
// before a connecting worker's are compared with them (register), so
// that one replaced on another replica is replaced here, not taken for
// the worker's.
func (r *Registry) refreshStored(ctx context.Context, defs []*wfdv1.WorkflowDefinition) {
	if r.routeDB() == nil {
		return
	}
	for _, d := range defs {
		r.definition(ctx, d.GetName())
	}
}

// Definition registers workflow here as stored, in replica mode, if
// workers on another replica define it (live.Workers).
func (r *Registry) Definition(ctx context.Context, workflow string) {
	r.definition(ctx, workflow)
}
