package live

import (
	"sync"
	"sync/atomic"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/internal/shrink"
)

// subBuffer is how many committed batches a subscriber may lag behind
// before it is cut loose and must catch up from the store.
const subBuffer = 256

// Hub fans committed records out to the streams that follow a handler. It
// holds no history: a stream replays from the store and uses the hub only
// for what is committed after it subscribed.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[*Subscription]struct{}
	// peak is the most handlers subs has held since it was last rebuilt.
	peak int
	// maxQueued bounds the bytes queued for one subscriber.
	maxQueued int64
}

type Subscription struct {
	// Ch carries batches of records; it is closed when the subscriber
	// lagged too far (it then re-reads from the store) or unsubscribed.
	// The subscriber calls taken for each batch it receives.
	Ch chan batch
	// queued is the bytes of the batches in ch: past the hub's limit the
	// subscriber is cut loose rather than hold more (the server's stream budget).
	queued atomic.Int64
	// Poke says records may have been committed by another replica
	// (the commit feed): the subscriber reads the store after what it has. One
	// pending poke stands for any number.
	Poke chan struct{}
}

// batch is the records of one commit of a handler, and their encoded size.
type batch struct {
	Recs []*wfdv1.Record
	size int64
}

// Taken tells the subscription that the subscriber has b: its bytes no
// longer count against the hub's limit.
func (s *Subscription) Taken(b batch) { s.queued.Add(-b.size) }

func NewHub(maxQueued int64) *Hub {
	return &Hub{subs: map[string]map[*Subscription]struct{}{}, maxQueued: maxQueued}
}

func (h *Hub) Subscribe(id string) *Subscription {
	s := &Subscription{Ch: make(chan batch, subBuffer), Poke: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[id] == nil {
		h.subs[id] = map[*Subscription]struct{}{}
		h.peak = max(h.peak, len(h.subs))
	}
	h.subs[id][s] = struct{}{}
	return s
}

// Compact rebuilds the map of followed handlers if it fell far below its
// peak (see shrink.Map); it reports whether it did.
func (h *Hub) Compact() bool {
	return shrink.Locked(&h.mu, &h.subs, &h.peak)
}

func (h *Hub) Unsubscribe(id string, s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[id][s]; ok {
		delete(h.subs[id], s)
		if len(h.subs[id]) == 0 {
			delete(h.subs, id)
		}
		close(s.Ch)
	}
}

// Publish hands a commit's records of handler id, size bytes encoded, to
// its subscribers.
func (h *Hub) Publish(id string, recs []*wfdv1.Record, size int64) {
	if len(recs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b := batch{Recs: recs, size: size}
	for s := range h.subs[id] {
		if s.queued.Add(size) <= h.maxQueued || s.queued.Load() == size {
			select {
			case s.Ch <- b:
				continue
			default:
			}
		}
		// Too slow (too many batches, or too many bytes, queued; one
		// batch alone is always taken): drop it; the stream notices the
		// closed channel and catches up from the store.
		delete(h.subs[id], s)
		close(s.Ch)
	}
	if len(h.subs[id]) == 0 {
		delete(h.subs, id)
	}
}

// Poke tells the subscribers of handler id that records of it may have
// been committed elsewhere.
func (h *Hub) Poke(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[id] {
		s.poked()
	}
}

// PokeAll pokes every subscriber (the commit feed may have missed
// commits).
func (h *Hub) PokeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.subs {
		for s := range m {
			s.poked()
		}
	}
}

func (s *Subscription) poked() {
	select {
	case s.Poke <- struct{}{}:
	default: // one is pending already
	}
}

// Count returns the number of live subscriptions (for stats).
func (h *Hub) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.subs {
		n += len(m)
	}
	return n
}
