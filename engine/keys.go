package engine

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/names"
)

// KeyEvent is the type of the event that delivers a published event to a
// handler waiting for its key (see WaitForKey). Build it with
// PublishedEvent.
const KeyEvent = "wfd.key"

// EventLog looks published events up; the server implements it over its
// store. Find returns the oldest event with the key published at or after
// since, global or addressed to handlerID.
type EventLog interface {
	Find(ctx context.Context, key, handlerID string, since time.Time) (Published, bool, error)
}

// PublishedEvent is the event that delivers p to a waiting handler.
func PublishedEvent(p Published) Event {
	f := map[string]*structpb.Value{
		"key":          structpb.NewStringValue(p.Key),
		"event_id":     structpb.NewStringValue(p.ID),
		"published_at": structpb.NewStringValue(p.At.UTC().Format(time.RFC3339Nano)),
		"handler_id":   structpb.NewStringValue(p.HandlerID),
	}
	if p.Data != nil {
		f["data"] = structpb.NewStructValue(p.Data)
	}
	return Event{Type: KeyEvent, Data: &structpb.Struct{Fields: f}}
}

func publishedFrom(ev Event) Published {
	f := ev.Data.GetFields()
	at, _ := time.Parse(time.RFC3339Nano, f["published_at"].GetStringValue())
	return Published{ID: f["event_id"].GetStringValue(), Key: f["key"].GetStringValue(), Data: f["data"].GetStructValue(),
		At: at, HandlerID: f["handler_id"].GetStringValue()}
}

// WaitForKey carries out flow.StepContext.WaitForKey.
func (sc *stepContext) WaitForKey(key string, opts KeyOptions) (Published, error) {
	if key == "" {
		return Published{}, fmt.Errorf("%w: empty key", ErrInvalidEvent)
	}
	if err := names.Check("the key", key, names.MaxNameBytes, true); err != nil {
		return Published{}, sc.refuse(fmt.Errorf("step %q waits for a key: %w", sc.Step(), err))
	}
	x := sc.x
	id := sc.nextWaitID()
	since := opts.Since
	if since.IsZero() {
		since = x.h.st.createdAt
	}
	if r, ok := x.item.resolved[id]; ok {
		if r.timedOut {
			return Published{}, fmt.Errorf("waiting for key %q: %w", key, ErrTimeout)
		}
		return publishedFrom(r.ev), nil
	}
	if log := x.h.e.opts.EventLog; log != nil && x.wait == nil {
		p, found, err := log.Find(x.ctx, key, sc.HandlerID(), since)
		if err != nil {
			return Published{}, fmt.Errorf("looking up key %q: %w", key, err)
		}
		if found {
			if err := sc.checkWaits(); err != nil {
				return Published{}, err
			}
			// Remember it, so that a re-run after a later wait takes the
			// same event.
			if x.item.resolved == nil {
				x.item.resolved = map[string]waitResult{}
			}
			x.item.resolved[id] = waitResult{ev: PublishedEvent(p)}
			return p, nil
		}
	}
	match := &structpb.Struct{Fields: map[string]*structpb.Value{"key": structpb.NewStringValue(key)}}
	ev, err := sc.await(&waiter{eventType: KeyEvent, match: match, on: &waitOn{key: key, since: since}}, id, opts.Timeout,
		func() string { return fmt.Sprintf("waiting for key %q", key) })
	if err != nil {
		return Published{}, err
	}
	return publishedFrom(ev), nil
}
