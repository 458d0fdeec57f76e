package live

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// wakeWorkers bounds how many handlers one publication wakes at once.
const wakeWorkers = 32

// eventLog is the engine's view of the store's published-event log.
type eventLog struct{ s *Runtime }

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

// Wake delivers a publication to the handlers waiting for its key.
func (s *Runtime) Wake(ctx context.Context, p *persistence.Published) (int, error) {
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
func (s *Runtime) deliverPublished(ctx context.Context, id string, ev engine.Event, p *persistence.Published) bool {
	eventID := p.ID
	err := s.WithLive(ctx, id, func(h *engine.Handler) error {
		return h.SendEvent(ctx, ev, engine.SendOptions{IdempotencyKey: "pub:" + eventID, FromWfd: true})
	})
	var owned *apierr.Owned
	if errors.As(err, &owned) {
		// Live on another replica: that replica delivers it (Ownership.Publication).
		var took bool
		if took, err = s.owners.Publication(ctx, owned, p); took {
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
func (s *Runtime) recheckKey(id string, w engine.WaiterInfo) {
	ctx := s.background
	p, ok, err := s.store.FindPublished(ctx, w.Key, id, w.Since)
	if err != nil || !ok {
		return
	}
	s.deliverPublished(ctx, id, engine.PublishedEvent(publishedToEngine(&p)), &p)
}
