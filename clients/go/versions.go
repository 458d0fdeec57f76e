package client

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// Workflow returns one workflow with every version the server has
// (GetVersions, oldest first): which is current, who serves it, and how
// many handlers of it are running, released and finished.
func (c *Client) Workflow(ctx context.Context, name string) (*wfdv1.Workflow, error) {
	res, err := c.svc.ListWorkflows(ctx, &wfdv1.ListWorkflowsRequest{Name: name})
	if err != nil {
		return nil, err
	}
	if len(res.GetWorkflows()) != 1 {
		return nil, status.Errorf(codes.Internal, "the server listed %d workflows named %q", len(res.GetWorkflows()), name)
	}
	return res.GetWorkflows()[0], nil
}

// UpgradeOptions say which handlers Upgrade moves, and whether it only
// checks.
type UpgradeOptions struct {
	// To is the version to move to; "": the current one.
	To string
	// HandlerIDs limits the upgrade to these handlers; empty: every
	// running handler of the version, page by page.
	HandlerIDs []string
	// DryRun reports, per handler, whether it can move, and moves none.
	DryRun bool
	// PageSize is how many handlers each call takes (0: the server's 100).
	PageSize int32
}

// Upgrade moves the running handlers of version from of workflow to
// another version, each if the server finds from its state that the
// target can carry it on, and returns what happened to each (or, with
// DryRun, would): moved (can move), refused with the reason, or busy
// (retry once it is idle). It pages through all of them.
func (c *Client) Upgrade(ctx context.Context, workflow, from string, opts UpgradeOptions) ([]*wfdv1.HandlerUpgrade, error) {
	req := &wfdv1.UpgradeHandlersRequest{Workflow: workflow, FromVersion: from, ToVersion: opts.To, HandlerIds: opts.HandlerIDs,
		DryRun: opts.DryRun, PageSize: opts.PageSize}
	var out []*wfdv1.HandlerUpgrade
	for {
		res, err := c.svc.UpgradeHandlers(ctx, req)
		if err != nil {
			return out, err
		}
		out = append(out, res.GetHandlers()...)
		// A page continues after the last handler of the previous one, by
		// creation time, so moved handlers leaving the version skip none.
		if res.GetNextPageToken() == "" {
			return out, nil
		}
		req.PageToken = res.GetNextPageToken()
	}
}

// SetCurrentVersion makes version the one Run starts for workflow (a
// worker-defined workflow: a built-in one's is the one its program
// registers last).
func (c *Client) SetCurrentVersion(ctx context.Context, workflow, version string) (*wfdv1.Workflow, error) {
	res, err := c.svc.SetCurrentVersion(ctx, &wfdv1.SetCurrentVersionRequest{Workflow: workflow, Version: version})
	if err != nil {
		return nil, err
	}
	return res.GetWorkflow(), nil
}

// DeleteVersion deletes a version of a worker-defined workflow that is not
// current and that no unfinished handler runs (codes.FailedPrecondition,
// with their count, otherwise).
func (c *Client) DeleteVersion(ctx context.Context, workflow, version string) error {
	_, err := c.svc.DeleteWorkflowVersion(ctx, &wfdv1.DeleteWorkflowVersionRequest{Workflow: workflow, Version: version})
	return err
}
