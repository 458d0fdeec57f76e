package rpc

// Waiting for a handler to finish (WaitHandler, and the wait field of
// RunWorkflow and SendEvent). A wait follows the handler's committed
// records through the hub, as a stream does, on any replica (the commit feed),
// and never loads the handler: a released handler stays released until
// whatever wakes it (an event, a due timer) brings it to its end, and the
// wait answers then.

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"

	"github.com/wfd-dev/wfd/persistence"
)

const (
	// defaultWait is WaitHandler's timeout when the request sets none.
	defaultWait = time.Minute
	// maxWait bounds every wait: a call should not hold a connection for
	// longer than a proxy or a load balancer would let it.
	maxWait = time.Hour
)

func (v *Service) WaitHandler(ctx context.Context, req *wfdv1.WaitHandlerRequest) (*wfdv1.WaitHandlerResponse, error) {
	if err := checkHandlerID(req.GetHandlerId()); err != nil {
		return nil, err
	}
	d, err := checkWait("timeout", req.GetTimeout())
	if err != nil {
		return nil, err
	}
	if req.GetTimeout() == nil {
		d = defaultWait
	}
	if req.GetAfterSeq() != 0 && !req.GetUntilIdle() {
		return nil, fmt.Errorf("%w: after_seq needs until_idle", apierr.ErrInvalid)
	}
	until := waitUntil{idle: req.GetUntilIdle(), afterSeq: req.GetAfterSeq()}
	h, err := v.waitFor(ctx, req.GetHandlerId(), d, until)
	if err != nil {
		return nil, err
	}
	return &wfdv1.WaitHandlerResponse{Handler: h}, nil
}

// checkWait checks a wait duration (unset is 0: no wait).
func checkWait(field string, d *durationpb.Duration) (time.Duration, error) {
	if d == nil {
		return 0, nil
	}
	if err := d.CheckValid(); err != nil {
		return 0, fmt.Errorf("%w: %s: %w", apierr.ErrInvalid, field, err)
	}
	if x := d.AsDuration(); x < 0 || x > maxWait {
		return 0, fmt.Errorf("%w: %s %v is outside 0..%v", apierr.ErrInvalid, field, x, maxWait)
	}
	return d.AsDuration(), nil
}

// waitUntil is what a wait waits for besides the handler's end: with
// idle, an idleness at or after the record afterSeq. A SendEvent's
// answer is read after the event's commit, so its last_seq is at least
// that of the change that took the event in: an idleness there or later
// comes after the event.
type waitUntil struct {
	idle     bool
	afterSeq uint64
}

// done reports whether the stored handler m is what the wait waits for.
func (u waitUntil) done(m *persistence.Handler) bool {
	return m.Status != persistence.StatusRunning || u.idle && !m.IdleSince.IsZero() && m.LastSeq >= u.afterSeq
}

// record reports whether r ends the wait (or may: the store decides).
func (u waitUntil) record(r *wfdv1.Record) bool {
	if r.GetHandlerFinished() != nil {
		return true
	}
	return u.idle && r.GetIdleChanged().GetIdle() && r.GetSeq() >= u.afterSeq
}

// wait returns the handler once it has finished, or as it is when d has
// passed or the server begins to drain (a drain does not fail the call:
// the caller gets the running handler and may wait again, elsewhere).
// The caller's context ends it with its error.
func (s *Service) wait(ctx context.Context, id string, d time.Duration) (*wfdv1.Handler, error) {
	return s.waitFor(ctx, id, d, waitUntil{})
}

// waitFor is wait, answering also when until says so.
func (s *Service) waitFor(ctx context.Context, id string, d time.Duration, until waitUntil) (*wfdv1.Handler, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		// Subscribe before reading: a terminal (or idle) record committed
		// after the read reaches the subscription.
		sub := s.hub.Subscribe(id)
		meta, err := s.rt.Meta(ctx, id)
		if err != nil || until.done(&meta) {
			s.hub.Unsubscribe(id, sub)
			if err != nil {
				return nil, err
			}
			return s.rt.View(&meta), nil
		}
		finished, err := s.awaitFinished(ctx, sub, timer.C, until)
		s.hub.Unsubscribe(id, sub)
		if err != nil {
			return nil, err
		}
		if !finished {
			// Time is up, or the server drains: answer with what is stored.
			meta, err := s.rt.Meta(ctx, id)
			if err != nil {
				return nil, err
			}
			return s.rt.View(&meta), nil
		}
		// Finished, or the subscriber lagged and was cut loose: either way
		// the store says which, on the next lap.
	}
}

// awaitFinished follows sub until a terminal record (or one until waits
// for) (true), the subscription is cut loose for lagging or poked (true:
// re-read the store), the timer fires or the server drains (false), or
// ctx ends (its error).
func (s *Service) awaitFinished(ctx context.Context, sub *live.Subscription, timeout <-chan time.Time, until waitUntil) (bool, error) {
	for {
		select {
		case b, ok := <-sub.Ch:
			if !ok {
				return true, nil
			}
			sub.Taken(b)
			for _, r := range b.Recs {
				if until.record(r) {
					return true, nil
				}
			}
		case <-sub.Poke:
			// Another replica committed records of it (the commit feed): the
			// store says whether it finished.
			return true, nil
		case <-timeout:
			return false, nil
		case <-s.draining:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// waitAfter is the answer of a call with a wait field whose change is
// durable (h, the handler as it committed): h itself when there is no
// wait or h is finished, else the handler once it finishes or d passes.
// The change is done, so a failed wait does not fail the call: it answers
// with h (the caller's own deadline excepted, which ends it as any call).
func (s *Service) waitAfter(ctx context.Context, h *wfdv1.Handler, d time.Duration) (*wfdv1.Handler, error) {
	if d <= 0 || h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING && h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_QUEUED {
		return h, nil
	}
	out, err := s.wait(ctx, h.GetHandlerId(), d)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		s.log.Warn("waiting after a durable change failed; answering with the handler as it committed", "handler", h.GetHandlerId(), "err", err)
		return h, nil
	}
	return out, nil
}
