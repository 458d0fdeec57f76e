package client

import (
	"context"
	"iter"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// PublishedOptions filter and page PublishedEvents. The zero value lists
// the whole published-event log, latest first, in pages of the server's
// default size (100).
type PublishedOptions struct {
	// Key keeps the events published under this key ("": every key).
	Key string
	// Since keeps the events published at or after this time.
	Since time.Time
	// HandlerID keeps the events published for this handler alone.
	HandlerID string
	// PageSize is the most events per page (at most 1000).
	PageSize int
	// PageToken continues from an earlier page.
	PageToken string
}

func (o *PublishedOptions) request() (*wfdv1.ListPublishedEventsRequest, error) {
	size, err := pageSize(o.PageSize)
	if err != nil {
		return nil, err
	}
	req := &wfdv1.ListPublishedEventsRequest{Key: o.Key, HandlerId: o.HandlerID, PageSize: size, PageToken: o.PageToken}
	if !o.Since.IsZero() {
		req.Since = timestamppb.New(o.Since)
	}
	return req, nil
}

// PublishedEvents returns one page of the published-event log, latest
// first, and the token of the next page ("" after the last).
func (c *Client) PublishedEvents(ctx context.Context, opts PublishedOptions) ([]*wfdv1.PublishedEvent, string, error) {
	req, err := opts.request()
	if err != nil {
		return nil, "", err
	}
	res, err := c.svc.ListPublishedEvents(ctx, req)
	if err != nil {
		return nil, "", err
	}
	return res.GetEvents(), res.GetNextPageToken(), nil
}

// PublishedEventsAll yields every event that opts select, latest first,
// page after page, from opts.PageToken on. It stops after the first
// error, which it yields.
func (c *Client) PublishedEventsAll(ctx context.Context, opts PublishedOptions) iter.Seq2[*wfdv1.PublishedEvent, error] {
	return allPages(opts.PageToken, func(token string) ([]*wfdv1.PublishedEvent, string, error) {
		opts.PageToken = token
		return c.PublishedEvents(ctx, opts)
	})
}
