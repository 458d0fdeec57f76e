package engine

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

// KeyEvent is the type of the event that delivers a published event to a
// handler waiting for its key (see WaitForKey). Build it with
// PublishedEvent.
const KeyEvent = "wfd.key"

// Published is an event from the server's append-only event log: published
// under a key, for every handler or only one.
type Published struct {
	ID        string
	Key       string
	Data      *structpb.Struct
	At        time.Time
	HandlerID string // "" for every handler
}

// EventLog looks published events up; the server implements it over its
// store. Find returns the oldest event with the key published at or after
// since, global or addressed to handlerID.
type EventLog interface {
	Find(ctx context.Context, key, handlerID string, since time.Time) (Published, bool, error)
}

// KeyOptions narrow WaitForKey.
type KeyOptions struct {
	// Since is the earliest publication taken (default: when the handler
	// started).
	Since time.Time
	// Timeout bounds the wait (0: none).
	Timeout time.Duration
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

// WaitForKey returns an event published under key. If one exists already
// (published since opts.Since, by default since the handler started) it
// returns at once; otherwise it returns ErrWaiting, which the step returns,
// and the next publication with that key wakes the handler (in memory or
// released) and runs the step again, when WaitForKey returns it. Without an
// EventLog (Options) only publications after the wait are seen.
func (sc *StepContext) WaitForKey(key string, opts KeyOptions) (Published, error) {
	if key == "" {
		return Published{}, fmt.Errorf("%w: empty key", ErrInvalidEvent)
	}
	if err := checkText("the key", key, maxNameBytes, true); err != nil {
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
