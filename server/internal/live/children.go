package live

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
	"github.com/wfd-dev/wfd/server/internal/apierr"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
)

// starter starts child handlers for the engine, idempotently by id: a
// child that exists in the store (running or finished) is not started again.
type starter struct{ s *Runtime }

var _ engine.Starter = starter{}

// StartChild starts the child; a store failure in its error (which
// becomes the parent's step error) is logged and hidden (apierr.Hide).
func (st starter) StartChild(ctx context.Context, parent, child, workflow string, input *structpb.Struct) error {
	return apierr.Hide(st.s.log, st.startChild(ctx, parent, child, workflow, input))
}

func (st starter) startChild(ctx context.Context, parent, child, workflow string, input *structpb.Struct) error {
	s := st.s
	unlock := s.turns.Lock(child)
	defer unlock()
	meta, err := s.Meta(ctx, child)
	switch {
	case err == nil:
		if meta.Workflow != workflow {
			return fmt.Errorf("%w: child %s runs workflow %q, not %q", apierr.ErrAlreadyExists, child, meta.Workflow, workflow)
		}
		return nil
	case !errors.Is(err, apierr.ErrNotFound):
		return err
	}
	// In replica mode the child's workflow may be defined by workers on
	// another replica only: registered here from the store first. The
	// child starts here; its runs wait for a worker, so it is handed over
	// to the replica with one (Workers.KickRoutes) once its start is durable.
	s.workers.Definition(ctx, workflow, "")
	started, err := s.claimStart(ctx, child)
	if err != nil {
		return err
	}
	if err := s.owners.Acquire(ctx, child); err != nil {
		started(nil, err)
		return err
	}
	slot, undo, err := s.enqueue(ctx, workflow, "", child, input)
	if err != nil {
		started(nil, err)
		s.releaseUnused(child)
		return err
	}
	h, err := s.engine.Start(ctx, workflow, input, engine.StartOptions{HandlerID: child, Parent: parent, Slot: slot})
	undo(err)
	started(h, err)
	if errors.Is(err, engine.ErrHandlerExists) {
		return nil
	}
	if err != nil {
		s.releaseUnused(child)
	}
	return err
}

// liveHandler is handler id in memory here (apierr.ErrNotFound: not).
func (s *Runtime) liveHandler(id string) (*engine.Handler, error) {
	if h, ok := s.engine.Handler(id); ok {
		return h, nil
	}
	return nil, fmt.Errorf("handler %q %w", id, apierr.ErrNotFound)
}

// ChildEnded tells the parent how a child ended (durably: the parent takes
// the event like any other, deduplicated by the child's id).
func (s *Runtime) ChildEnded(c *engine.Change) {
	ev := engine.ChildDoneEvent(c.HandlerID, engine.ChildResult{Status: c.Status, Result: c.Result, Error: c.Error})
	err := s.WithLive(s.background, c.Parent, func(h *engine.Handler) error {
		return h.SendEvent(s.background, ev, engine.SendOptions{IdempotencyKey: "child:" + c.HandlerID, FromWfd: true})
	})
	// A parent live on another replica hears of it there, through the
	// commit feed.
	if err != nil && !errors.Is(err, engine.ErrHandlerDone) && !errors.As(err, new(*apierr.Owned)) && s.background.Err() == nil {
		s.log.Warn("telling a parent its child ended", "parent", c.Parent, "child", c.HandlerID, "err", err)
	}
}

// cancelChildren cancels the running children of a cancelled parent.
func (s *Runtime) cancelChildren(children []string) {
	for _, id := range children {
		err := s.WithLive(s.background, id, func(h *engine.Handler) error { return h.Cancel(s.background) })
		if err != nil && !errors.Is(err, engine.ErrHandlerDone) && !errors.Is(err, apierr.ErrNotFound) && s.background.Err() == nil {
			s.log.Warn("cancelling a child", "child", id, "err", err)
		}
	}
}

// RecheckChildren runs once a wait on children is committed, and at
// start-up for every parent that waits: a child that ended while its
// notice could not be delivered (the server stopped in between) is
// reported again from the store. A child whose end the parent's checkpoint
// already holds is not: telling the parent again would change nothing, yet
// load it (a restart would then write a handler_restored record, and bump
// its updated_at, for nothing).
func (s *Runtime) RecheckChildren(parent string, children []string) {
	var reported map[string]*statev1.ChildResult // read once, when needed
	for _, id := range children {
		c, ended := s.EndedChild(parent, id)
		if !ended {
			continue
		}
		if reported == nil {
			reported = s.reportedChildren(parent)
		}
		if _, ok := reported[id]; ok {
			continue
		}
		s.ChildEnded(c)
	}
}

// recheckLoadedParent runs, in replica mode, when a parent that waits on
// children (its checkpoint says which) was loaded here: a child that ended
// on another replica while the parent was on its way between replicas
// (released by one, loaded here before the commit feed told anyone) was
// told no one, so it is checked here, once the parent is in memory (in the
// background: the load is still in progress). Only children whose end
// the checkpoint lacks are read, one read each.
func (s *Runtime) recheckLoadedParent(meta *persistence.Handler, st *statev1.HandlerState) {
	if !s.replicated() {
		return
	}
	var pending []string
	for _, w := range meta.Waiters {
		if w.Key != ChildrenKey {
			continue
		}
		var wi wfdv1.WaiterInfo
		if proto.Unmarshal(w.Match, &wi) != nil {
			continue
		}
		for _, id := range wi.GetChildren() {
			if _, reported := st.GetChildResults()[id]; !reported && !slices.Contains(pending, id) {
				pending = append(pending, id)
			}
		}
	}
	if len(pending) == 0 {
		return
	}
	parent := meta.ID
	go func() {
		for _, id := range pending {
			if c, ended := s.EndedChild(parent, id); ended {
				s.ChildEnded(c)
			}
		}
	}()
}

// EndedChild reads child from the store: if it ended, ended is true and c
// is the change that tells parent (childEnded).
func (s *Runtime) EndedChild(parent, child string) (c *engine.Change, ended bool) {
	meta, err := s.Meta(s.background, child)
	if err != nil || meta.Status == persistence.StatusRunning {
		return nil, false
	}
	var result *structpb.Struct
	if len(meta.Result) > 0 {
		result = &structpb.Struct{}
		_ = proto.Unmarshal(meta.Result, result)
	}
	return &engine.Change{HandlerID: child, Parent: parent, Status: meta.Status, Result: result, Error: meta.Error}, true
}

// reportedChildren returns the children whose end the parent's stored
// checkpoint holds: that is durable, so they need no notice. If the
// checkpoint cannot be read it returns an empty map, and every ended child
// is reported again (the parent ignores what it already has; loading it
// deals with a damaged checkpoint).
func (s *Runtime) reportedChildren(parent string) map[string]*statev1.ChildResult {
	raw, err := s.store.LoadSnapshot(s.background, parent)
	if err != nil {
		return map[string]*statev1.ChildResult{}
	}
	var st statev1.HandlerState
	if err := proto.Unmarshal(raw, &st); err != nil || st.GetHandlerId() != parent {
		return map[string]*statev1.ChildResult{}
	}
	if r := st.GetChildResults(); r != nil {
		return r
	}
	return map[string]*statev1.ChildResult{}
}

// RecheckWaitingParents runs recheckChildren for every parent that waits
// for children in the store.
func (s *Runtime) RecheckWaitingParents(ctx context.Context) error {
	return s.RecheckParents(ctx, func(string) bool { return true })
}

// RecheckParents runs recheckChildren for the parents that wait for
// children in the store and that want accepts.
func (s *Runtime) RecheckParents(ctx context.Context, want func(id string) bool) error {
	ids, err := s.store.WaitingFor(ctx, ChildrenKey, 0)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] || !want(id) {
			continue
		}
		seen[id] = true
		meta, err := s.Meta(ctx, id)
		if err != nil {
			continue
		}
		for _, w := range meta.Waiters {
			if w.Key == ChildrenKey {
				var wi wfdv1.WaiterInfo
				if proto.Unmarshal(w.Match, &wi) == nil {
					go s.RecheckChildren(id, wi.GetChildren())
				}
			}
		}
	}
	return nil
}
