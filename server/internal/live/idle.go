package live

import (
	"sync"
	"time"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/shrink"
)

// idleSet tracks the idle handlers in memory, least recently active first,
// from the changes the journal commits. The reaper releases from its front.
// It holds an entry per idle handler, so its entries are small: a linked
// list threaded through them rather than a container/list element each.
type idleSet struct {
	mu sync.Mutex
	// head is the least recently active, tail the most.
	head, tail *idleEntry
	byID       map[string]*idleEntry
	// peak is the most entries byID has held since it was last rebuilt.
	peak int
}

type idleEntry struct {
	id string
	// at is when the handler became idle in memory (or was loaded idle), in
	// Unix nanoseconds: the idle timeout counts from here.
	at         int64
	prev, next *idleEntry
}

func newIdleSet() *idleSet { return &idleSet{byID: map[string]*idleEntry{}} }

// observe updates the set from a committed change; it reports whether the
// handler is now idle in memory.
func (s *idleSet) observe(c *engine.Change, now time.Time) bool {
	idle := c.Idle != nil && !c.Released && c.Status == engine.StatusRunning
	s.mu.Lock()
	defer s.mu.Unlock()
	e, present := s.byID[c.HandlerID]
	switch {
	case idle && !present:
		e = &idleEntry{id: c.HandlerID, at: now.UnixNano(), prev: s.tail}
		if s.tail != nil {
			s.tail.next = e
		} else {
			s.head = e
		}
		s.tail = e
		s.byID[c.HandlerID] = e
		s.peak = max(s.peak, len(s.byID))
	case !idle && present:
		s.unlinkLocked(e)
	}
	return idle
}

// remove takes a handler that left memory other than by a committed
// change (a lost one) off the set.
func (s *idleSet) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byID[id]; ok {
		s.unlinkLocked(e)
	}
}

func (s *idleSet) unlinkLocked(e *idleEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		s.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		s.tail = e.prev
	}
	delete(s.byID, e.id)
}

func (s *idleSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// pick returns the handlers to release: those idle since before cutoff (if
// cutoff is set) and, oldest first, enough more to bring the set down to
// keep (if keep >= 0).
func (s *idleSet) pick(cutoff time.Time, keep int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	excess := -1
	if keep >= 0 {
		excess = len(s.byID) - keep
	}
	var out []string
	for e := s.head; e != nil; e = e.next {
		if len(out) < excess || (!cutoff.IsZero() && e.at < cutoff.UnixNano()) {
			out = append(out, e.id)
			continue
		}
		break
	}
	return out
}

// compact rebuilds the index if it fell far below its peak (see
// shrink.Map); it reports whether it did.
func (s *idleSet) compact() bool {
	return shrink.Locked(&s.mu, &s.byID, &s.peak)
}
