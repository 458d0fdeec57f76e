package workers

// Worker-defined versions across replicas (replica mode; see
// docs/ARCHITECTURE.md "Workers and replicas"): the stored versions are the
// truth, and a replica reads the one it uses where it uses it. A start
// (RunWorkflow, StartChild) reads the workflow's current version, and a
// load of a handler reads the version it runs (one primary-key read each),
// and registers it here if it is new here; a stored current version that
// differs from the one here becomes current here. ListWorkflows lists from
// the store. So a version registered or promoted on one replica is what
// every replica starts and routes next, with no window and nothing to miss
// while a notification is in flight or a listener reconnects.

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/persistence"
)

// registerStored registers a stored version with the engine (current if
// stored as current); false if it cannot be (said in the log). Callers
// hold r.mu.
func (r *Registry) registerStored(sd persistence.WorkflowDef) bool {
	d := &wfdv1.WorkflowDefinition{}
	if err := proto.Unmarshal(sd.Def, d); err != nil {
		r.log.Error("stored workflow definition cannot be decoded", "workflow", sd.Name, "version", sd.Version, "err", err)
		return false
	}
	if _, builtIn := r.eng.Workflow(sd.Name); builtIn && r.defs[sd.Name] == nil {
		r.log.Error("stored workflow definition not registered: a workflow of that name is built into the server", "workflow", sd.Name)
		return false
	}
	w, err := r.workflowFromDefinition(d, sd.Version)
	if err == nil {
		err = r.eng.RegisterVersion(w, sd.Current)
	}
	if err != nil {
		// Stricter validation now: say so, and serve the rest.
		r.log.Error("stored workflow definition not registered", "workflow", sd.Name, "version", sd.Version, "err", err)
		return false
	}
	if r.defs[sd.Name] == nil {
		r.defs[sd.Name] = map[string]string{}
	}
	r.defs[sd.Name][sd.Version] = sd.Hash
	return true
}

// adopt makes the stored version sd registered here (and current here if
// it is stored as current). Callers hold r.mu.
func (r *Registry) adopt(sd persistence.WorkflowDef) bool {
	if _, ok := r.defs[sd.Name][sd.Version]; !ok {
		return r.registerStored(sd)
	}
	if sd.Current {
		if w, _ := r.eng.Workflow(sd.Name); w.Version != sd.Version {
			if err := r.eng.SetCurrent(sd.Name, sd.Version); err != nil {
				r.log.Warn("making a stored version current", "workflow", sd.Name, "version", sd.Version, "err", err)
			} else {
				r.log.Info("workflow version made current by another replica", "workflow", sd.Name, "version", sd.Version, "was", w.Version)
			}
		}
	}
	return true
}

// definition resolves version of workflow name ("": the current one) if
// workers define it (false: built in, or unknown). In replica mode it is
// read from the store: a worker on another replica may have defined the
// workflow or version since this replica started, or an operator made
// another version current; it is registered here first, so that its
// handlers start and restore here with it (rather than failing as of an
// unknown workflow or version) and its calls are routed by it. If the
// store cannot be read, it is what is registered here.
func (r *Registry) definition(ctx context.Context, name, version string) (string, bool) {
	local := func() (string, bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		vs, known := r.defs[name]
		if !known {
			return "", false
		}
		if version != "" {
			return version, true
		}
		w, _ := r.eng.Workflow(name)
		_, ok := vs[w.Version]
		return w.Version, ok
	}
	if r.routeDB() == nil {
		return local()
	}
	r.mu.Lock()
	_, known := r.defs[name]
	r.mu.Unlock()
	if _, builtIn := r.eng.Workflow(name); builtIn && !known {
		return "", false
	}
	// Read outside r.mu: dispatches take it, and must not wait for the
	// database.
	sd, err := r.db.GetWorkflow(ctx, name, version)
	if err != nil {
		if !errors.Is(err, persistence.ErrNotFound) && !errors.Is(err, persistence.ErrInvalid) {
			r.log.Warn("reading a stored workflow version", "workflow", name, "version", version, "err", err)
		}
		return local()
	}
	r.mu.Lock()
	ok := r.adopt(sd)
	r.mu.Unlock()
	if !ok {
		return local()
	}
	return sd.Version, true
}

// SyncStored registers here, in replica mode, every stored version that is
// new here, and makes the stored current versions current here
// (ListWorkflows: every replica lists the same). Errors are logged: what
// is registered here is listed.
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
	stored := map[ref]bool{}
	for _, sd := range defs {
		r.adopt(sd)
		stored[ref{sd.Name, sd.Version}] = true
	}
	if err != nil {
		return // a partial list says nothing of what was deleted
	}
	// A version deleted through another replica (DeleteWorkflowVersion,
	// which no running handler needed) goes here too.
	for name, versions := range r.defs {
		for version := range versions {
			if cur, _ := r.eng.Workflow(name); stored[ref{name, version}] || cur.Version == version {
				continue // the current version is never deleted
			}
			if err := r.eng.Unregister(name, version); err != nil {
				continue
			}
			delete(versions, version)
			r.log.Info("workflow version deleted by another replica", "workflow", name, "version", version)
		}
	}
}

// refreshStored brings what is registered here up to the stored versions
// before a connecting worker's definitions are compared with them
// (register), so that a version another replica stored is known here.
func (r *Registry) refreshStored(ctx context.Context, defs []*wfdv1.WorkflowDefinition) {
	if len(defs) > 0 {
		r.SyncStored(ctx)
	}
}

// Definition registers version of workflow ("": its current one) here as
// stored, in replica mode, if workers on another replica define it
// (live.Workers).
func (r *Registry) Definition(ctx context.Context, workflow, version string) {
	r.definition(ctx, workflow, version)
}
