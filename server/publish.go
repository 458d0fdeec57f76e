package server

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/replica"
)

// PublishEvent appends to the event log, then wakes every handler that
// waits for the key (or only the one addressed). A handler that parks on
// the key after the append finds the event itself (WaitForKey looks the
// log up first, and the journal looks again once the wait is committed),
// so no publication is missed in between. Delivery is at least once and
// deduplicated per handler by the event id.
func (v *service) PublishEvent(ctx context.Context, req *wfdv1.PublishEventRequest) (*wfdv1.PublishEventResponse, error) {
	if err := validatePublish(req, v.s.payloadLimits()); err != nil {
		return nil, err
	}
	id := req.GetEventId()
	if id == "" {
		id = uuid.Must(uuid.NewV7()).String()
	}
	data, err := proto.Marshal(req.GetData())
	if err != nil {
		return nil, fmt.Errorf("%w: data: %w", apierr.ErrInvalid, err)
	}
	p := persistence.Published{ID: id, Key: req.GetKey(), HandlerID: req.GetHandlerId(), Data: data, At: v.s.opts.Now()}
	// Who published it comes from the caller's verified identity, never
	// from the request.
	if who, ok := auth.FromContext(ctx); ok {
		p.PublishedBy = who.Subject
	}
	p, err = v.s.store.Publish(ctx, p)
	if err != nil {
		return nil, err
	}
	if replica.Forwarded(ctx) && req.GetHandlerId() != "" {
		// Another replica's delivery of its publication to the handler
		// live here (internal/replica/forward.go): this one handler only.
		p.HandlerID = req.GetHandlerId()
	}
	woken, err := v.s.rt.Wake(ctx, &p)
	if err != nil {
		// The event is in the log: say so, so that a client retries with
		// its id (which wakes the handlers again) rather than publishing
		// a second event.
		ie := apierr.NewInternal(fmt.Sprintf("event %s was published (seq %d) but waking the handlers that wait for it failed; "+
			"publish again with event_id %q to wake them", p.ID, p.Seq, p.ID), err)
		return nil, ie
	}
	return &wfdv1.PublishEventResponse{EventId: p.ID, Seq: p.Seq, Woken: int32(woken)}, nil
}
