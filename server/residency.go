package server

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/wfd-dev/wfd/engine"
)

// idleSet tracks the idle handlers in memory, least recently active first,
// from the changes the journal commits. The reaper releases from its front.
type idleSet struct {
	mu   sync.Mutex
	lru  *list.List // of *idleEntry, oldest first
	byID map[string]*list.Element
}

type idleEntry struct {
	id string
	// at is when the handler became idle in memory (or was loaded idle): the
	// idle timeout counts from here.
	at time.Time
}

func newIdleSet() *idleSet { return &idleSet{lru: list.New(), byID: map[string]*list.Element{}} }

// observe updates the set from a committed change; it reports whether the
// handler is now idle in memory.
func (s *idleSet) observe(c *engine.Change, now time.Time) bool {
	idle := c.Idle != nil && !c.Released && c.Status == engine.StatusRunning
	s.mu.Lock()
	defer s.mu.Unlock()
	el, present := s.byID[c.HandlerID]
	switch {
	case idle && !present:
		s.byID[c.HandlerID] = s.lru.PushBack(&idleEntry{id: c.HandlerID, at: now})
	case !idle && present:
		s.lru.Remove(el)
		delete(s.byID, c.HandlerID)
	}
	return idle
}

func (s *idleSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}

// pick returns the handlers to release: those idle since before cutoff (if
// cutoff is set) and, oldest first, enough more to bring the set down to
// keep (if keep >= 0).
func (s *idleSet) pick(cutoff time.Time, keep int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	excess := -1
	if keep >= 0 {
		excess = s.lru.Len() - keep
	}
	var out []string
	for el := s.lru.Front(); el != nil; el = el.Next() {
		e := el.Value.(*idleEntry)
		if len(out) < excess || (!cutoff.IsZero() && e.at.Before(cutoff)) {
			out = append(out, e.id)
			continue
		}
		break
	}
	return out
}

// reaper releases idle handlers after the idle timeout, and the least
// recently active ones whenever more idle handlers than the cap are in
// memory.
type reaper struct {
	s       *Server
	timeout time.Duration // 0: no timeout
	keep    int           // -1: no cap
	kick    chan struct{}
}

// releaseWorkers bounds concurrent releases; each waits for a commit, and
// commits are shared, so a few dozen in flight fill a commit well.
const releaseWorkers = 64

func (r *reaper) run(ctx context.Context) {
	tick := time.Second
	if r.timeout > 0 {
		tick = min(max(r.timeout/4, 10*time.Millisecond), time.Second)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.kick:
		}
		var cutoff time.Time
		if r.timeout > 0 {
			cutoff = r.s.opts.Now().Add(-r.timeout)
		}
		ids := r.s.idle.pick(cutoff, r.keep)
		if len(ids) == 0 {
			continue
		}
		sem := make(chan struct{}, releaseWorkers)
		var wg sync.WaitGroup
		for _, id := range ids {
			h, ok := r.s.engine.Handler(id)
			if !ok {
				continue
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if _, err := h.Release(ctx); err != nil && !errors.Is(err, engine.ErrNotIdle) &&
					!errors.Is(err, engine.ErrHandlerDone) && !errors.Is(err, engine.ErrReleased) && ctx.Err() == nil {
					r.s.log.Warn("release failed", "handler", id, "err", err)
				}
			})
		}
		wg.Wait()
	}
}

// poke asks the reaper to run now (the cap was passed).
func (r *reaper) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}
