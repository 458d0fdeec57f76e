package workers

import (
	"context"
	"fmt"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"

	"github.com/wfd-dev/wfd/engine"
)

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
func (r *Registry) checkDef(ctx context.Context, g registrant, d *wfdv1.WorkflowDefinition) (addedDef, error) {
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
	} else if _, ok := r.eng.Workflow(d.GetName()); ok {
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
// it (mayServe): PermissionDenied otherwise.
func (r *Registry) register(ctx context.Context, g registrant, defs []*wfdv1.WorkflowDefinition) (map[string]string, error) {
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
		register := r.eng.Register
		if a.replaces != "" {
			register = r.eng.Replace
			r.log.Info("workflow definition replaced", "workflow", a.d.GetName(), "worker", g.source, "subject", g.id.Subject, "hash", a.hash, "was", a.replaces)
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
func (r *Registry) replaceable(ctx context.Context, name string) error {
	hs, _, err := r.db.ListHandlers(ctx, persistence.Query{Workflow: name, Statuses: []persistence.Status{persistence.StatusRunning}, PageSize: 1})
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
