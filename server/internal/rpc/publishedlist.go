package rpc

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"

	"github.com/wfd-dev/wfd/persistence"
)

// ListPublishedEvents reads the published-event log, latest first, from
// the store's indexes (a key's latest events never scan the whole log).
func (v *Service) ListPublishedEvents(ctx context.Context, req *wfdv1.ListPublishedEventsRequest) (*wfdv1.ListPublishedEventsResponse, error) {
	if err := validateListPublished(req); err != nil {
		return nil, err
	}
	q := persistence.PublishedQuery{Key: req.GetKey(), HandlerID: req.GetHandlerId(), PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken()}
	if req.GetSince() != nil {
		q.Since = req.GetSince().AsTime()
	}
	ps, next, err := v.store.ListPublished(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &wfdv1.ListPublishedEventsResponse{NextPageToken: next, Events: make([]*wfdv1.PublishedEvent, len(ps))}
	for i := range ps {
		out.Events[i] = publishedToProto(&ps[i])
	}
	return out, nil
}

func validateListPublished(r *wfdv1.ListPublishedEventsRequest) error {
	if r.GetKey() != "" {
		if err := checkName("key", r.GetKey()); err != nil {
			return err
		}
	}
	if r.GetHandlerId() != "" {
		if err := checkHandlerID(r.GetHandlerId()); err != nil {
			return err
		}
	}
	if s := r.GetSince(); s != nil {
		if err := s.CheckValid(); err != nil {
			return fmt.Errorf("%w: since: %w", apierr.ErrInvalid, err)
		}
	}
	if r.GetPageSize() < 0 || r.GetPageSize() > maxPageSize {
		return fmt.Errorf("%w: page_size %d is outside 0..%d", apierr.ErrInvalid, r.GetPageSize(), maxPageSize)
	}
	return nil
}

func publishedToProto(p *persistence.Published) *wfdv1.PublishedEvent {
	out := &wfdv1.PublishedEvent{
		EventId: p.ID, Seq: p.Seq, Key: p.Key, HandlerId: p.HandlerID,
		PublishedAt: timestamppb.New(p.At), PublishedBy: p.PublishedBy,
	}
	if len(p.Data) > 0 {
		var s structpb.Struct
		if proto.Unmarshal(p.Data, &s) == nil {
			out.Data = &s
		}
	}
	return out
}
