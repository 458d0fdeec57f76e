package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/observe"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
)

// Live returns the in-memory handler, loading it from its last checkpoint
// if it is not in memory. However many callers ask at once, the handler is
// loaded once; they all wait for that load.
func (s *Runtime) Live(ctx context.Context, id string) (*engine.Handler, error) {
	return s.liveFor(ctx, id, nil)
}

// liveFor is live for a caller that brings the event accepting from
// outside (nil for none): a handler not in memory that would refuse it (its
// type, or its data by the workflow's schema) is not loaded, and the
// refusal is the error (engine.RestoreOptions).
func (s *Runtime) liveFor(ctx context.Context, id string, accepting *engine.Event) (*engine.Handler, error) {
	for {
		if h, ok := s.engine.Handler(id); ok {
			return h, nil
		}
		c, isNew, ready := s.loads.join(id, accepting, func() bool {
			_, ok := s.engine.Handler(id)
			return ok
		})
		if ready {
			continue
		}
		if isNew {
			// The load must not fail because the caller that started it
			// went away: others may be waiting for it.
			h, err := s.load(context.WithoutCancel(ctx), id, accepting)
			s.loads.finish(id, c, h, err)
			return h, err
		}
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if c.h == nil && c.err == nil {
			continue // a start that started nothing (claimStart): look again
		}
		if c.accepting != accepting && errors.Is(c.err, engine.ErrInvalidEvent) {
			// The load refused another caller's event (its type or its
			// data), not necessarily this one's: load again.
			continue
		}
		return c.h, c.err
	}
}

// load restores a running handler from the store: one read of its
// metadata and checkpoint together, one restore.
func (s *Runtime) load(ctx context.Context, id string, accepting *engine.Event) (_ *engine.Handler, err error) {
	ctx, span := s.tracing.Rehydrate(ctx, id)
	defer func() { observe.End(span, err) }()
	start := time.Now()
	// A handler that just left memory may still have its last changes on
	// their way to the store: load what they leave, not what was before.
	if err := s.journal.Settled(ctx, id); err != nil {
		return nil, err
	}
	// In replica mode the handler is this replica's only with its lease;
	// taken before the read, so the read sees every commit of a previous
	// owner (the database makes Acquire wait for them).
	if err := s.owners.Acquire(ctx, id); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.releaseUnused(id)
		}
	}()
	meta, raw, err := s.store.LoadHandler(ctx, id)
	if errors.Is(err, persistence.ErrNotFound) {
		return nil, fmt.Errorf("handler %q %w", id, apierr.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if meta.Status != persistence.StatusRunning {
		return nil, ErrDone(id, meta.Status)
	}
	// In replica mode, a handler of a workflow whose workers are on
	// another replica is loaded there (Workers.RouteLoad).
	if err := s.workers.RouteLoad(ctx, id, meta.Workflow, meta.WorkflowVersion); err != nil {
		return nil, err
	}
	var st statev1.HandlerState
	if err := proto.Unmarshal(raw, &st); err != nil {
		return nil, s.failHandler(ctx, meta, fmt.Errorf("cannot decode its checkpoint: %w", err))
	}
	if raw == nil {
		return nil, s.failHandler(ctx, meta, errors.New("it has no checkpoint"))
	}
	h, info, err := s.engine.Restore(ctx, &st, engine.RestoreOptions{Accepting: accepting})
	switch {
	case err == nil:
		s.stats.Rehydrated(time.Since(start))
		// The restore reaches the journal with the handler's next change;
		// until then the idle list learns of it here, so an idle handler
		// loaded for nothing is still released in time.
		if info.Idle != nil {
			s.trackIdle(&engine.Change{HandlerID: id, Status: info.Status, Idle: info.Idle})
		}
		s.recheckLoadedParent(&meta, &st)
		return h, nil
	case errors.Is(err, engine.ErrHandlerExists):
		if h, ok := s.engine.Handler(id); ok {
			return h, nil
		}
		return nil, err
	case errors.Is(err, engine.ErrInvalidEvent):
		return nil, err // refused the caller's event: nothing was restored
	case errors.Is(err, engine.ErrUnknownWorkflow), errors.Is(err, engine.ErrInvalidState), errors.Is(err, engine.ErrHandlerDone):
		return nil, s.failHandler(ctx, meta, fmt.Errorf("cannot restore its checkpoint: %w", err))
	}
	return nil, err
}

// releaseUnused frees the lease taken for handler id by a start or load
// that failed, unless the handler is in memory after all.
func (s *Runtime) releaseUnused(id string) {
	if _, ok := s.engine.Handler(id); !ok {
		s.owners.Release(id)
	}
}

// failHandler ends a handler that cannot be restored: it is marked failed
// with the reason and its stream gets a terminal record. The server goes on.
func (s *Runtime) failHandler(ctx context.Context, meta persistence.Handler, cause error) error {
	s.log.Error("handler cannot be restored; marking it failed", "handler", meta.ID, "err", cause)
	now := s.opts.Now()
	meta.Status = persistence.StatusFailed
	meta.Error = cause.Error()
	meta.CompletedAt, meta.UpdatedAt = now, now
	meta.IdleSince = time.Time{}
	meta.Waiters = nil
	meta.Residency = persistence.ResidencyReleased
	rec := &wfdv1.Record{Seq: meta.LastSeq + 1, Time: timestamppb.New(now), Kind: &wfdv1.Record_HandlerFinished{
		HandlerFinished: &wfdv1.HandlerFinished{Status: wfdv1.HandlerStatus_HANDLER_STATUS_FAILED, Error: meta.Error},
	}}
	b, err := proto.Marshal(rec)
	if err != nil {
		return err
	}
	fence, _ := s.owners.Fence(meta.ID)
	// Only over the state it read: a handler changed since (finished,
	// say) is not failed for what it no longer is.
	if err := s.store.Write(ctx, persistence.Change{Handler: meta, Records: []persistence.Record{{Seq: rec.Seq, Data: b}},
		Fence: fence, IfRevision: &meta.Revision}); err != nil {
		return err
	}
	s.hub.Publish(meta.ID, []*wfdv1.Record{rec}, int64(len(b)))
	return fmt.Errorf("%w: handler %s failed: %w", engine.ErrHandlerDone, meta.ID, cause)
}

// Recover resumes every handler that was busy in memory when the process
// stopped. Released handlers stay in the store until something wakes them
// (an event, a due timer), and so do handlers that were idle in memory:
// they are marked released, so start-up time does not grow with them. A
// handler that cannot be restored is marked failed.
func (s *Runtime) Recover(ctx context.Context) error {
	start := time.Now()
	var n Resumed
	token := ""
	for {
		hs, next, err := s.store.ListHandlers(ctx, persistence.Query{
			Statuses: []persistence.Status{persistence.StatusRunning}, Residency: persistence.ResidencyActive,
			PageSize: persistence.MaxPageSize, PageToken: token,
		})
		if err != nil {
			return fmt.Errorf("server: recover: %w", err)
		}
		if err := s.resumePage(ctx, hs, &n); err != nil {
			return fmt.Errorf("server: recover: %w", err)
		}
		if next == "" {
			break
		}
		token = next
	}
	if n.Any() {
		s.log.Info("recovered handlers", "resumed", n.Resumed, "released", n.Released, "failed", n.Failed, "live_elsewhere", n.Elsewhere,
			"changed_since_read", n.Changed, "took", time.Since(start))
	}
	return nil
}

// resumePage is resume of a page of recovery. A replica that was stalled
// (paused, starved of CPU) for half its lease time meanwhile refuses to
// take leases until it has renewed (leases.acquire): it renews at once
// and resumes the page again, rather than fail its start. Resuming a page
// again is safe: handlers marked released since are left alone (their
// revision changed), those loaded since are in memory.
func (s *Runtime) resumePage(ctx context.Context, hs []persistence.Handler, n *Resumed) error {
	for attempt := 1; ; attempt++ {
		err := s.Resume(ctx, hs, n)
		if err == nil || attempt == 3 || !errors.Is(err, apierr.ErrUnavailable) || ctx.Err() != nil {
			return err
		}
		s.log.Warn("recovery could not take leases; renewing and trying again", "attempt", attempt, "err", err)
		s.owners.Renew(ctx)
	}
}

// Resumed counts what resume did; changed counts the idle handlers left
// alone because they changed after they were read.
type Resumed struct{ Resumed, Failed, Released, Elsewhere, Changed int }

func (n *Resumed) Total() int { return n.Resumed + n.Failed + n.Released + n.Elsewhere + n.Changed }

func (n *Resumed) Any() bool { return n.Total() > 0 }

// Resume takes over handlers that some process had in memory
// (ResidencyActive) and none has now: busy ones are loaded and run on,
// idle ones are marked released (they stay in the store until woken). In
// replica mode each is taken under its lease: one this replica already
// holds (claimed by the orphan claims of replica mode) is used as it is; a handler whose lease another
// live replica holds is left alone (live there).
func (s *Runtime) Resume(ctx context.Context, hs []persistence.Handler, n *Resumed) error {
	var idle []string
	for _, h := range hs {
		if !h.IdleSince.IsZero() {
			idle = append(idle, h.ID)
		}
	}
	// Their leases together: one statement for the page, not one each.
	idleErrs := s.owners.AcquireEach(ctx, idle)
	var toRelease []persistence.Change
	for _, h := range hs {
		if !h.IdleSince.IsZero() {
			// It was idle in memory when its process stopped: it stays
			// in the store, like a released handler, until woken. In
			// replica mode only if no other live replica has it.
			if err := idleErrs[h.ID]; err != nil {
				if errors.As(err, new(*apierr.Owned)) {
					n.Elsewhere++
					continue
				}
				return fmt.Errorf("%s: %w", h.ID, err)
			}
			fence, _ := s.owners.Fence(h.ID)
			// Conditional on the revision read: the read may be older
			// than the lease (a page is read before its leases are
			// taken), and another replica may have answered, finished or
			// released the handler in between; that is never undone.
			revision := h.Revision
			h.Residency = persistence.ResidencyReleased
			// The Write frees the lease (FreeLease with the fence; none
			// outside replica mode).
			toRelease = append(toRelease, persistence.Change{Handler: h, Fence: fence, FreeLease: !fence.IsZero(), IfRevision: &revision})
			continue
		}
		if _, err := s.Live(ctx, h.ID); err != nil {
			if errors.As(err, new(*apierr.Owned)) {
				n.Elsewhere++ // live on another replica
				continue
			}
			if !errors.Is(err, engine.ErrHandlerDone) {
				return fmt.Errorf("%s: %w", h.ID, err)
			}
			n.Failed++
			continue
		}
		n.Resumed++
	}
	return s.markReleased(ctx, toRelease, n)
}

// markReleased commits resume's changes that mark idle handlers
// released, together; if the store refuses them (some handler changed
// since it was read), one by one, leaving out those that changed: they
// are where their new state says (answered, finished, released or live
// elsewhere), and their lease, taken for nothing, is freed.
func (s *Runtime) markReleased(ctx context.Context, changes []persistence.Change, n *Resumed) error {
	if len(changes) == 0 {
		return nil
	}
	err := s.store.Write(ctx, changes...)
	if err == nil {
		for _, c := range changes {
			s.owners.Forget(c.Handler.ID) // freed by the Write
		}
		n.Released += len(changes)
		return nil
	}
	if !errors.Is(err, persistence.ErrConflict) || errors.Is(err, persistence.ErrFenced) {
		for _, c := range changes {
			s.owners.Release(c.Handler.ID)
		}
		return fmt.Errorf("marking idle handlers released: %w", err)
	}
	var failed error
	for _, c := range changes {
		err := s.store.Write(ctx, c)
		switch {
		case err == nil:
			s.owners.Forget(c.Handler.ID)
			n.Released++
		case errors.Is(err, persistence.ErrConflict):
			s.owners.Release(c.Handler.ID)
			n.Changed++
		default:
			s.owners.Release(c.Handler.ID)
			failed = cmp.Or(failed, fmt.Errorf("marking idle handler %s released: %w", c.Handler.ID, err))
		}
	}
	return failed
}
