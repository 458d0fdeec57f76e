package workers

import (
	"context"
	"fmt"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/flow"
)

// Versions of worker-defined workflows (docs/ARCHITECTURE.md "Workflow
// versions"): a definition a worker registers is a version of its
// workflow, named by WorkflowDefinition.version or by its content hash,
// and never changes. A new version is stored and registered with the
// engine next to the others; it becomes current (what RunWorkflow starts)
// if it is the workflow's first or the registration says so
// (make_current), never because an old worker reconnects. Handlers keep
// the version they started on, and their runs go only to workers that
// registered it.

// addedDef is a definition a worker registers, checked: its version, its
// content hash, and, when the version is new here, its engine workflow and
// whether it becomes current.
type addedDef struct {
	d       *wfdv1.WorkflowDefinition
	w       engine.Workflow
	version string
	hash    string
	current bool
}

// checkDef checks the definition a worker registers at position i, under
// r.mu. A version registered already with the same definition comes back
// without a workflow (w.Name ""), claimed for g; with another definition it
// is ALREADY_EXISTS: versions are immutable. Whether a new version becomes
// current, register decides.
func (r *Registry) checkDef(ctx context.Context, g registrant, i int, d *wfdv1.WorkflowDefinition) (addedDef, error) {
	_, hash, err := encodeDefinition(d)
	if err != nil {
		return addedDef{}, fmt.Errorf("%w: %w", apierr.ErrInvalid, err)
	}
	a := addedDef{d: d, hash: hash, version: d.GetVersion()}
	if a.version == "" {
		a.version = hashVersion(hash)
	} else if err := flow.CheckVersion(a.version); err != nil {
		return a, fmt.Errorf("%w: workflows[%d].version: %w", apierr.ErrInvalid, i, err)
	}
	name := d.GetName()
	versions, known := r.defs[name]
	switch {
	case known && versions[a.version] == hash:
		return a, r.claim(ctx, g, name, a.version, hash)
	case known && versions[a.version] != "":
		return a, fmt.Errorf("%w: version %q of workflow %q is registered with another definition; a version never changes: "+
			"register the changed definition as a new version (another version name, or none to name it by its hash)",
			apierr.ErrAlreadyExists, a.version, name)
	case !known:
		if _, ok := r.eng.Workflow(name); ok {
			return a, fmt.Errorf("%w: workflow %q is built into the server", apierr.ErrFailedPrecondition, name)
		}
	}
	w, err := r.workflowFromDefinition(d, a.version)
	if err == nil {
		err = w.Validate()
	}
	if err != nil {
		return a, fmt.Errorf("%w: %w", apierr.ErrInvalid, err)
	}
	a.w = w
	return a, nil
}

// hashVersion is the version of a definition registered without a name:
// the start of its content hash, as long as the engine's.
func hashVersion(hash string) string {
	return hash[:min(len(hash), 16)]
}

// register registers the definitions of a connecting worker (source names
// it) with the engine and stores them, and returns the version of each, in
// order. A version already registered is fine with an equal definition;
// a new one is added (checkDef). A definition that fails validation is
// InvalidArgument, with engine.Register's errors. With authentication on,
// g must own each workflow or hold a grant for it (mayServe):
// PermissionDenied otherwise.
func (r *Registry) register(ctx context.Context, g registrant, defs []*wfdv1.WorkflowDefinition) ([]ref, error) {
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
	out := make([]ref, 0, len(defs))
	var todo []addedDef
	firstOf := map[string]bool{} // new workflows whose first version is taken
	for i, d := range defs {
		a, err := r.checkDef(ctx, g, i, d)
		if err != nil {
			return nil, err
		}
		// A new workflow's first version is current; other new versions
		// (of the same registration too) as they say.
		_, known := r.defs[d.GetName()]
		a.current = d.GetMakeCurrent() || !known && !firstOf[d.GetName()]
		if !known {
			firstOf[d.GetName()] = true
		}
		v := ref{workflow: d.GetName(), version: a.version}
		for _, o := range out {
			if o == v {
				return nil, fmt.Errorf("%w: workflow %q version %q is defined twice", apierr.ErrInvalid, v.workflow, v.version)
			}
		}
		out = append(out, v)
		if a.w.Name != "" {
			todo = append(todo, a)
		}
	}
	for _, a := range todo {
		if err := r.store(ctx, a, g, owners[a.d.GetName()]); err != nil {
			return nil, err
		}
		r.addVersion(a.w, a.hash, a.current)
		r.log.Info("workflow version registered", "workflow", a.w.Name, "version", a.version, "current", a.current,
			"worker", g.source, "subject", g.id.Subject)
	}
	return out, nil
}

// addVersion registers a version with the engine and notes its hash.
// Callers hold r.mu.
func (r *Registry) addVersion(w engine.Workflow, hash string, current bool) {
	if err := r.eng.RegisterVersion(w, current); err != nil {
		// Checked by checkDef (and LoadStored's is logged there): only a
		// version registered meanwhile gets here, which is the same.
		r.log.Warn("registering a workflow version", "workflow", w.Name, "version", w.Version, "err", err)
	}
	if r.defs[w.Name] == nil {
		r.defs[w.Name] = map[string]string{}
	}
	r.defs[w.Name][w.Version] = hash
}
