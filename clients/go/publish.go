package client

import (
	"context"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// PublishOption configures Publish.
type PublishOption func(*wfdv1.PublishEventRequest)

// WithPublishHandler addresses the event to one handler: only it sees the
// event. By default every handler waiting for the key does.
func WithPublishHandler(id string) PublishOption {
	return func(r *wfdv1.PublishEventRequest) { r.HandlerId = id }
}

// WithEventID sets the event's id (at most 128 of [A-Za-z0-9._:-]), which
// makes publishing idempotent: a second publication with the id changes
// nothing and returns the first. Publish makes up a UUIDv7 id when none is
// given.
func WithEventID(id string) PublishOption {
	return func(r *wfdv1.PublishEventRequest) { r.EventId = id }
}

// WithPublishDataStruct sets the event's data as a Struct, in place of
// Publish's map.
func WithPublishDataStruct(s *structpb.Struct) PublishOption {
	return func(r *wfdv1.PublishEventRequest) { r.Data = s }
}

// Publish appends an event with data under key to the server's immutable
// event log, once it is durable wakes the handlers that wait for the key
// (in memory or released), and returns the event's id, its position in the
// log (Seq) and how many handlers it woke. A handler that starts waiting
// for the key later still finds an event published after it started.
//
// Every call carries an event id (a UUIDv7 unless [WithEventID] gives one),
// so a retry after a lost response appends nothing: it returns the first
// publication's id and seq, and delivers it at most once to each handler
// (its woken count leaves out the handlers the first one woke).
func (c *Client) Publish(ctx context.Context, key string, data map[string]any, opts ...PublishOption) (*wfdv1.PublishEventResponse, error) {
	d, err := toStruct("data", data)
	if err != nil {
		return nil, err
	}
	req := &wfdv1.PublishEventRequest{Key: key, Data: d}
	for _, opt := range opts {
		opt(req)
	}
	if err := defaultID(&req.EventId, "event id"); err != nil {
		return nil, err
	}
	return c.svc.PublishEvent(ctx, req)
}

// Stats reports the server's handler counts (in memory, idle in memory,
// released, by status) and its release, rehydration, stream and commit
// counters since it started. It only reads.
func (c *Client) Stats(ctx context.Context) (*wfdv1.GetStatsResponse, error) {
	return c.svc.GetStats(ctx, &wfdv1.GetStatsRequest{})
}
