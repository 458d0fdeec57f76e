package client

import (
	"context"
	"iter"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// ListOptions filter and page List. The zero value lists every handler,
// newest first, in pages of the server's default size (100).
type ListOptions struct {
	// Workflow keeps the handlers of this workflow.
	Workflow string
	// WorkflowVersion keeps the handlers of this version of Workflow.
	WorkflowVersion string
	// Statuses keeps the handlers with one of these statuses.
	Statuses []wfdv1.HandlerStatus
	// IdleOnly keeps idle handlers.
	IdleOnly bool
	// IdleFor keeps handlers idle for at least this long (implies IdleOnly).
	IdleFor time.Duration
	// Residency keeps handlers in memory (active) or released.
	Residency wfdv1.Residency
	// Where filters and sorts by search attributes and built-in fields,
	// e.g. `customer = "acme" and amount > 100 order by amount desc` (the
	// README's "Search attributes" has the language). Conditions on
	// attributes need Workflow. A malformed query, or one no index
	// answers, is codes.InvalidArgument saying why.
	Where string
	// PageSize is the most handlers per page (at most 1000).
	PageSize int
	// PageToken continues from an earlier page.
	PageToken string
}

func (o *ListOptions) request() (*wfdv1.ListHandlersRequest, error) {
	size, err := pageSize(o.PageSize)
	if err != nil {
		return nil, err
	}
	req := &wfdv1.ListHandlersRequest{
		Workflow: o.Workflow, WorkflowVersion: o.WorkflowVersion, Statuses: o.Statuses, IdleOnly: o.IdleOnly,
		Residency: o.Residency, PageSize: size, PageToken: o.PageToken, Where: o.Where,
	}
	if o.IdleFor != 0 {
		req.IdleFor = durationpb.New(o.IdleFor)
	}
	return req, nil
}

// List returns one page of handlers, newest first, and the token of the
// next page ("" after the last).
func (c *Client) List(ctx context.Context, opts ListOptions) ([]*wfdv1.Handler, string, error) {
	req, err := opts.request()
	if err != nil {
		return nil, "", err
	}
	res, err := c.svc.ListHandlers(ctx, req)
	if err != nil {
		return nil, "", err
	}
	return res.GetHandlers(), res.GetNextPageToken(), nil
}

// ListAll yields every handler that opts select, page after page, from
// opts.PageToken on. It stops after the first error, which it yields.
func (c *Client) ListAll(ctx context.Context, opts ListOptions) iter.Seq2[*wfdv1.Handler, error] {
	return allPages(opts.PageToken, func(token string) ([]*wfdv1.Handler, string, error) {
		opts.PageToken = token
		return c.List(ctx, opts)
	})
}
