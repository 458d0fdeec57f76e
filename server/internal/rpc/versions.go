package rpc

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"

	"github.com/wfd-dev/wfd/engine"
)

// ListWorkflows lists the registered workflows (their current versions);
// with a name, that workflow with every version and its handler counts;
// with versions, every workflow's versions without counts.
func (v *Service) ListWorkflows(ctx context.Context, req *wfdv1.ListWorkflowsRequest) (*wfdv1.ListWorkflowsResponse, error) {
	if req.GetName() != "" {
		if err := checkName("name", req.GetName()); err != nil {
			return nil, err
		}
	}
	// In replica mode, workflows workers defined on other replicas too.
	v.workers.SyncStored(ctx)
	out := &wfdv1.ListWorkflowsResponse{}
	var stored map[string]persistence.WorkflowDef
	if req.GetName() != "" || req.GetVersions() {
		stored = v.storedVersions(ctx)
	}
	for _, w := range v.engine.Workflows() {
		if req.GetName() != "" && w.Name != req.GetName() {
			continue
		}
		p := live.WorkflowToProto(&w)
		p.ServedByWorkers, p.WorkersConnected = v.workers.Serving(w.Name, "")
		if req.GetName() != "" || req.GetVersions() {
			vs, err := v.versionsOf(ctx, w.Name, stored, req.GetName() != "")
			if err != nil {
				return nil, err
			}
			p.Versions = vs
		}
		out.Workflows = append(out.Workflows, p)
	}
	if req.GetName() != "" && len(out.Workflows) == 0 {
		return nil, fmt.Errorf("%w: %q", engine.ErrUnknownWorkflow, req.GetName())
	}
	return out, nil
}

// storedVersions are the stored (worker-defined) versions by
// workflow@version, for their source and creation time. A store that
// cannot be read leaves them out (logged): the list is still true.
func (v *Service) storedVersions(ctx context.Context) map[string]persistence.WorkflowDef {
	defs, err := v.store.ListWorkflowDefs(ctx)
	if err != nil {
		v.log.Warn("listing stored workflow versions", "err", err)
	}
	out := make(map[string]persistence.WorkflowDef, len(defs))
	for _, d := range defs {
		out[d.Name+"@"+d.Version] = d
	}
	return out
}

// versionsOf describes every version of workflow name, oldest first, with
// the handler counts of each when counts is set (one index scan of the
// workflow's handlers).
func (v *Service) versionsOf(ctx context.Context, name string, stored map[string]persistence.WorkflowDef, counts bool) ([]*wfdv1.WorkflowVersion, error) {
	defs, current := v.engine.Versions(name)
	var tally []persistence.VersionCount
	if counts {
		var err error
		if tally, err = v.store.CountVersions(ctx, name); err != nil {
			return nil, fmt.Errorf("counting the handlers of %q: %w", name, err)
		}
	}
	out := make([]*wfdv1.WorkflowVersion, 0, len(defs))
	for i := range defs {
		d := &defs[i]
		wv := &wfdv1.WorkflowVersion{Version: d.Version, Current: d.Version == current}
		if sd, ok := stored[name+"@"+d.Version]; ok {
			wv.Source, wv.CreatedAt = sd.Source, timestamppb.New(sd.CreatedAt)
		}
		byWorkers := false
		wv.Workers, byWorkers = v.workers.ServedBy(name, d.Version)
		wv.BuiltIn = !byWorkers
		wv.WorkersConnected = int32(len(wv.Workers))
		if counts {
			wv.Definition = live.WorkflowToProto(d)
		}
		for _, c := range tally {
			// Handlers from before versions run the first version.
			if c.Version != d.Version && (c.Version != "" || i != 0) {
				continue
			}
			switch {
			case c.Status.Terminal():
				wv.Finished += c.Count
			case c.Residency == persistence.ResidencyReleased:
				wv.Released += c.Count
			default:
				wv.Running += c.Count
			}
		}
		out = append(out, wv)
	}
	return out, nil
}

// SetCurrentVersion makes a version of a worker-defined workflow current.
func (v *Service) SetCurrentVersion(ctx context.Context, req *wfdv1.SetCurrentVersionRequest) (*wfdv1.SetCurrentVersionResponse, error) {
	if err := checkVersionRef(req.GetWorkflow(), req.GetVersion()); err != nil {
		return nil, err
	}
	if err := v.workers.SetCurrent(ctx, req.GetWorkflow(), req.GetVersion()); err != nil {
		return nil, err
	}
	w, _ := v.engine.Workflow(req.GetWorkflow())
	p := live.WorkflowToProto(&w)
	p.ServedByWorkers, p.WorkersConnected = v.workers.Serving(w.Name, "")
	return &wfdv1.SetCurrentVersionResponse{Workflow: p}, nil
}

// DeleteWorkflowVersion deletes an unused version of a worker-defined
// workflow.
func (v *Service) DeleteWorkflowVersion(ctx context.Context, req *wfdv1.DeleteWorkflowVersionRequest) (*wfdv1.DeleteWorkflowVersionResponse, error) {
	if err := checkVersionRef(req.GetWorkflow(), req.GetVersion()); err != nil {
		return nil, err
	}
	if err := v.workers.DeleteVersion(ctx, req.GetWorkflow(), req.GetVersion()); err != nil {
		return nil, err
	}
	return &wfdv1.DeleteWorkflowVersionResponse{}, nil
}

// UpgradeHandlers moves (or with dry_run, checks) a page of handlers of
// one version to another, each on its own (live.Runtime.Upgrade).
func (v *Service) UpgradeHandlers(ctx context.Context, req *wfdv1.UpgradeHandlersRequest) (*wfdv1.UpgradeHandlersResponse, error) {
	if err := validateUpgrade(req); err != nil {
		return nil, err
	}
	wf, from := req.GetWorkflow(), req.GetFromVersion()
	// In replica mode both versions may be new here.
	v.workers.Definition(ctx, wf, from)
	to := req.GetToVersion()
	if to == "" {
		v.workers.Definition(ctx, wf, "")
		cur, ok := v.engine.Workflow(wf)
		if !ok {
			return nil, fmt.Errorf("%w: %q", engine.ErrUnknownWorkflow, wf)
		}
		to = cur.Version
	} else {
		v.workers.Definition(ctx, wf, to)
	}
	if err := v.hasVersions(wf, from, to); err != nil {
		return nil, err
	}
	if from == to {
		return nil, fmt.Errorf("%w: from_version and to_version are both %s", apierr.ErrInvalid, to)
	}
	ids, next := req.GetHandlerIds(), ""
	if len(ids) == 0 {
		hs, token, err := v.store.ListHandlers(ctx, persistence.Query{Workflow: wf, Version: from, Statuses: []persistence.Status{persistence.StatusRunning},
			PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken()})
		if err != nil {
			return nil, err
		}
		for i := range hs {
			ids = append(ids, hs[i].ID)
		}
		next = token
	}
	out := &wfdv1.UpgradeHandlersResponse{ToVersion: to, NextPageToken: next}
	for _, id := range ids {
		hu, err := v.upgradeOne(ctx, id, wf, from, to, req.GetDryRun())
		if err != nil {
			return nil, fmt.Errorf("upgrading handler %s: %w", id, err)
		}
		out.Handlers = append(out.Handlers, hu)
	}
	return out, nil
}

// upgradeOne upgrades (or checks) one handler here, or on the replica
// that holds it in memory.
func (v *Service) upgradeOne(ctx context.Context, id, wf, from, to string, dryRun bool) (*wfdv1.HandlerUpgrade, error) {
	outcome, reason, err := v.rt.Upgrade(ctx, id, wf, from, to, dryRun)
	var owned *apierr.Owned
	if !errors.As(err, &owned) {
		if err != nil {
			return nil, err
		}
		return &wfdv1.HandlerUpgrade{HandlerId: id, Outcome: outcome, Reason: reason}, nil
	}
	res, err := v.replica.UpgradeOn(ctx, owned, &wfdv1.UpgradeHandlersRequest{Workflow: wf, FromVersion: from, ToVersion: to,
		HandlerIds: []string{id}, DryRun: dryRun})
	if errors.As(err, &owned) || err == nil && len(res.GetHandlers()) != 1 {
		return &wfdv1.HandlerUpgrade{HandlerId: id, Outcome: wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_BUSY,
			Reason: fmt.Sprintf("it is in memory on replica %s: retry there, or once it is released", owned.Owner)}, nil
	}
	if err != nil {
		return nil, err
	}
	return res.GetHandlers()[0], nil
}

// hasVersions says which of the versions of workflow is not registered
// (NotFound).
func (v *Service) hasVersions(workflow string, versions ...string) error {
	defs, _ := v.engine.Versions(workflow)
	if len(defs) == 0 {
		return fmt.Errorf("%w: %q", engine.ErrUnknownWorkflow, workflow)
	}
	for _, want := range versions {
		found := false
		for i := range defs {
			found = found || defs[i].Version == want
		}
		if !found {
			return fmt.Errorf("%w: %s@%s", engine.ErrUnknownVersion, workflow, want)
		}
	}
	return nil
}

// checkVersionRef checks a workflow and version named by a request.
func checkVersionRef(workflow, version string) error {
	if err := checkName("workflow", workflow); err != nil {
		return err
	}
	return checkName("version", version)
}

// validateUpgrade checks an UpgradeHandlersRequest's fields.
func validateUpgrade(r *wfdv1.UpgradeHandlersRequest) error {
	if err := checkVersionRef(r.GetWorkflow(), r.GetFromVersion()); err != nil {
		return fmt.Errorf("from_version: %w", err)
	}
	if r.GetToVersion() != "" {
		if err := checkName("to_version", r.GetToVersion()); err != nil {
			return err
		}
	}
	if r.GetPageSize() < 0 || r.GetPageSize() > maxPageSize {
		return fmt.Errorf("%w: page_size %d is outside 0..%d", apierr.ErrInvalid, r.GetPageSize(), maxPageSize)
	}
	if len(r.GetHandlerIds()) > maxPageSize {
		return fmt.Errorf("%w: %d handler_ids, at most %d", apierr.ErrInvalid, len(r.GetHandlerIds()), maxPageSize)
	}
	for i, id := range r.GetHandlerIds() {
		if err := checkHandlerID(id); err != nil {
			return fmt.Errorf("handler_ids[%d]: %w", i, err)
		}
	}
	if len(r.GetHandlerIds()) > 0 && r.GetPageToken() != "" {
		return fmt.Errorf("%w: handler_ids and page_token do not go together", apierr.ErrInvalid)
	}
	return nil
}
