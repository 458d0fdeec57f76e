package workers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"

	"github.com/wfd-dev/wfd/engine"
)

// SetCurrent makes version of a worker-defined workflow the one RunWorkflow
// starts: in the store first (so every replica starts it next, defsync),
// then here. A built-in workflow's current version is the one its program
// registers last: FailedPrecondition.
func (r *Registry) SetCurrent(ctx context.Context, workflow, version string) error {
	if err := r.workerDefined(ctx, workflow, version); err != nil {
		return err
	}
	if err := r.db.SetCurrentWorkflow(ctx, workflow, version); err != nil {
		return fmt.Errorf("making %s@%s current: %w", workflow, version, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.eng.SetCurrent(workflow, version); err != nil {
		return err
	}
	r.log.Info("workflow version made current", "workflow", workflow, "version", version)
	return nil
}

// DeleteVersion removes a version of a worker-defined workflow that is not
// current, that no connected worker serves and that no unfinished handler
// runs (FailedPrecondition, with the workers or the count, otherwise),
// from the store and from the engine. Finished
// handlers of it stay, as they are, until retention removes them.
func (r *Registry) DeleteVersion(ctx context.Context, workflow, version string) error {
	if err := r.workerDefined(ctx, workflow, version); err != nil {
		return err
	}
	if w, _ := r.eng.Workflow(workflow); w.Version == version {
		return fmt.Errorf("%w: %s@%s is the current version: make another current first", apierr.ErrFailedPrecondition, workflow, version)
	}
	counts, err := r.db.CountVersions(ctx, workflow)
	if err != nil {
		return fmt.Errorf("counting the handlers of %s@%s: %w", workflow, version, err)
	}
	var running int64
	for _, c := range counts {
		if c.Version == version && c.Status == persistence.StatusRunning {
			running += c.Count
		}
	}
	if running > 0 {
		return fmt.Errorf("%w: %d unfinished handlers run %s@%s: let them finish, cancel them or upgrade them (UpgradeHandlers)",
			apierr.ErrFailedPrecondition, running, workflow, version)
	}
	// A worker that still serves it would register it again when it
	// reconnects (and make it current, as a new version).
	if names, _ := r.ServedBy(workflow, version); len(names) > 0 || r.ServedElsewhere(ctx, workflow, version) {
		return fmt.Errorf("%w: connected workers still serve %s@%s (%s): stop them first, or they register it again when they reconnect",
			apierr.ErrFailedPrecondition, workflow, version, strings.Join(names, ", "))
	}
	if err := r.db.DeleteWorkflow(ctx, workflow, version, ""); err != nil && !errors.Is(err, persistence.ErrNotFound) {
		return fmt.Errorf("deleting %s@%s: %w", workflow, version, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.defs[workflow], version)
	if err := r.eng.Unregister(workflow, version); err != nil && !errors.Is(err, engine.ErrUnknownVersion) {
		return err
	}
	r.log.Info("workflow version deleted", "workflow", workflow, "version", version)
	return nil
}

// workerDefined checks that version of workflow exists and is defined by
// workers (NotFound, FailedPrecondition for a built-in one).
func (r *Registry) workerDefined(ctx context.Context, workflow, version string) error {
	if _, ok := r.definition(ctx, workflow, version); ok {
		r.mu.Lock()
		_, known := r.defs[workflow][version]
		r.mu.Unlock()
		if known {
			return nil
		}
		return fmt.Errorf("%w: %s@%s", engine.ErrUnknownVersion, workflow, version)
	}
	if _, builtIn := r.eng.Workflow(workflow); builtIn {
		return fmt.Errorf("%w: workflow %q is built into the server: its program registers its versions and the current one (the last registered)",
			apierr.ErrFailedPrecondition, workflow)
	}
	return fmt.Errorf("%w: %q", engine.ErrUnknownWorkflow, workflow)
}
