package workers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// Workflow ownership: with authentication on, a worker-defined workflow
// belongs to the subject whose worker first registered it
// (persistence.WorkflowDef.Owner, kept across restarts, replicas and
// replacements). Another worker credential may register it (and so take
// its runs, and see their input) only with a grant, Options.WorkerGrants:
// by subject, or "group:<role>" for every holder of a role. Admin may
// serve any workflow. A definition stored without an owner (registered
// while authentication was off) belongs to the first authenticated
// subject that registers it. Without authentication there are no
// subjects and no owners.

// registrant is who registers a worker's definitions: its name as the
// client chose it (source), and its identity when authentication is on.
type registrant struct {
	source string
	id     auth.Identity
	authed bool
}

// registrantOf returns the caller of ctx as a registrant named source.
func registrantOf(ctx context.Context, source string) registrant {
	id, ok := auth.FromContext(ctx)
	return registrant{source: source, id: id, authed: ok}
}

// owner is the Owner a definition it registers first is stored with.
func (g registrant) owner() string {
	if !g.authed {
		return ""
	}
	return truncate(g.id.Subject, persistence.MaxOwnerLen)
}

// mayServe says whether g may register workflow name, stored with owner.
func (r *Registry) mayServe(g registrant, name, owner string) error {
	if !g.authed || owner == "" || owner == g.owner() || g.id.HasRole(auth.RoleAdmin) {
		return nil
	}
	for _, who := range r.opts.WorkerGrants[name] {
		if role, ok := strings.CutPrefix(who, auth.GroupPrefix); ok && g.id.HasRole(role) || who == g.id.Subject {
			return nil
		}
	}
	return fmt.Errorf("%w: workflow %q belongs to %q, the subject whose worker first registered it; "+
		"%s may serve it only with a grant (wfd serve --worker-grant %s=%s)", apierr.ErrPermissionDenied, name, owner, g.id.Subject, name, g.id.Subject)
}

// owners checks, before anything is registered, that g may serve the
// stored workflows among names, and returns what each is stored with:
// the current owner, or the one it takes (unowned or new: g's).
func (r *Registry) owners(ctx context.Context, g registrant, names []string) (map[string]string, error) {
	out := make(map[string]string, len(names))
	for _, name := range names {
		out[name] = g.owner()
		if !g.authed {
			continue
		}
		sd, err := r.db.GetWorkflow(ctx, name, "")
		switch {
		case errors.Is(err, persistence.ErrNotFound), errors.Is(err, persistence.ErrInvalid):
			continue // not stored; an invalid name fails registration later
		case err != nil:
			return nil, fmt.Errorf("reading the owner of workflow %q: %w", name, err)
		}
		if err := r.mayServe(g, name, sd.Owner); err != nil {
			return nil, err
		}
		if sd.Owner != "" {
			out[name] = sd.Owner
		}
	}
	return out, nil
}

// claim gives a stored definition that has no owner to g, the first
// authenticated subject to register it. A concurrent change of the
// definition fails it (ErrConflict), as a racing registration does.
func (r *Registry) claim(ctx context.Context, g registrant, name, version, hash string) error {
	if !g.authed {
		return nil
	}
	sd, err := r.db.GetWorkflow(ctx, name, version)
	if err != nil {
		return fmt.Errorf("reading the owner of workflow %q: %w", name, err)
	}
	if sd.Owner != "" || sd.Hash != hash {
		return nil
	}
	sd.Owner = g.owner()
	if err := r.db.PutWorkflow(ctx, sd, hash); err != nil {
		return fmt.Errorf("recording the owner of workflow %q: %w", name, err)
	}
	r.log.Info("workflow claimed by its first authenticated worker", "workflow", name, "subject", g.id.Subject)
	return nil
}

// sameSubject refuses a run's call from another subject than the one of
// the worker it was dispatched to: a worker's and a run's ids are not
// credentials.
func sameSubject(ctx context.Context, w *worker) error {
	id, ok := auth.FromContext(ctx)
	if !ok || id.Subject == w.subject {
		return nil
	}
	return fmt.Errorf("%w: the run is worker %q's (subject %q), not %s's", apierr.ErrPermissionDenied, w.name, w.subject, id.Subject)
}
