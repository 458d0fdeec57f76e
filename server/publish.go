package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// wakeWorkers bounds how many handlers one publication wakes at once.
const wakeWorkers = 32

// eventLog is the engine's view of the store's published-event log.
type eventLog struct{ s *Server }

var _ engine.EventLog = eventLog{}

// Find looks a key up for a step's WaitForKey. A store failure becomes the
// step's error, which clients see: its detail goes to the log instead.
func (l eventLog) Find(ctx context.Context, key, handlerID string, since time.Time) (engine.Published, bool, error) {
	p, ok, err := l.s.store.FindPublished(ctx, key, handlerID, since)
	if err != nil || !ok {
		return engine.Published{}, ok, apierr.Hide(l.s.log, err)
	}
	return publishedToEngine(&p), true, nil
}

func publishedToEngine(p *persistence.Published) engine.Published {
	out := engine.Published{ID: p.ID, Key: p.Key, At: p.At, HandlerID: p.HandlerID}
	if len(p.Data) > 0 {
		var s structpb.Struct
		if proto.Unmarshal(p.Data, &s) == nil {
			out.Data = &s
		}
	}
	return out
}

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
	if forwarded(ctx) && req.GetHandlerId() != "" {
		// Another replica's delivery of its publication to the handler
		// live here (forward.go): this one handler only.
		p.HandlerID = req.GetHandlerId()
	}
	woken, err := v.s.wake(ctx, &p)
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

// wake delivers a publication to the handlers waiting for its key.
func (s *Server) wake(ctx context.Context, p *persistence.Published) (int, error) {
	ids, err := s.store.WaitingFor(ctx, p.Key, 0)
	if err != nil {
		return 0, err
	}
	ev := engine.PublishedEvent(publishedToEngine(p))
	var woken atomic.Int32
	sem := make(chan struct{}, wakeWorkers)
	var wg sync.WaitGroup
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] || (p.HandlerID != "" && id != p.HandlerID) {
			continue
		}
		seen[id] = true
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if s.deliverPublished(ctx, id, ev, p) {
				woken.Add(1)
			}
		})
	}
	wg.Wait()
	return int(woken.Load()), nil
}

// deliverPublished hands a publication to one handler; it reports whether
// the handler took it. A handler that no longer waits, or has ended, is
// not an error.
func (s *Server) deliverPublished(ctx context.Context, id string, ev engine.Event, p *persistence.Published) bool {
	eventID := p.ID
	err := s.withLive(ctx, id, func(h *engine.Handler) error {
		return h.SendEvent(ctx, ev, engine.SendOptions{IdempotencyKey: "pub:" + eventID, FromWfd: true})
	})
	var owned *apierr.Owned
	if errors.As(err, &owned) {
		// Live on another replica: that replica delivers it (forward.go).
		var took bool
		if took, err = s.forward.publication(ctx, owned, p); took {
			return true
		}
	}
	switch {
	case err == nil:
		return true
	case errors.Is(err, engine.ErrInvalidEvent), errors.Is(err, engine.ErrHandlerDone), errors.Is(err, apierr.ErrNotFound):
	default:
		s.log.Warn("delivering a published event", "handler", id, "event", eventID, "err", err)
	}
	return false
}

// recheckKey runs once a handler's wait on a key is committed: an event
// published between the handler's look-up and the commit of its waiter
// reached no index entry, so look again.
func (s *Server) recheckKey(id string, w engine.WaiterInfo) {
	ctx := s.background
	p, ok, err := s.store.FindPublished(ctx, w.Key, id, w.Since)
	if err != nil || !ok {
		return
	}
	s.deliverPublished(ctx, id, engine.PublishedEvent(publishedToEngine(&p)), &p)
}
