package server

import (
	"sync"
	"sync/atomic"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/internal/shrink"
)

// subBuffer is how many committed batches a subscriber may lag behind
// before it is cut loose and must catch up from the store.
const subBuffer = 256

// hub fans committed records out to the streams that follow a handler. It
// holds no history: a stream replays from the store and uses the hub only
// for what is committed after it subscribed.
type hub struct {
	mu   sync.Mutex
	subs map[string]map[*subscription]struct{}
	// peak is the most handlers subs has held since it was last rebuilt.
	peak int
	// maxQueued bounds the bytes queued for one subscriber.
	maxQueued int64
}

type subscription struct {
	// ch carries batches of records; it is closed when the subscriber
	// lagged too far (it then re-reads from the store) or unsubscribed.
	// The subscriber calls taken for each batch it receives.
	ch chan batch
	// queued is the bytes of the batches in ch: past the hub's limit the
	// subscriber is cut loose rather than hold more (streamlimits.go).
	queued atomic.Int64
	// poke says records may have been committed by another replica
	// (feed.go): the subscriber reads the store after what it has. One
	// pending poke stands for any number.
	poke chan struct{}
}

// batch is the records of one commit of a handler, and their encoded size.
type batch struct {
	recs []*wfdv1.Record
	size int64
}

// taken tells the subscription that the subscriber has b: its bytes no
// longer count against the hub's limit.
func (s *subscription) taken(b batch) { s.queued.Add(-b.size) }

func newHub(maxQueued int64) *hub {
	return &hub{subs: map[string]map[*subscription]struct{}{}, maxQueued: maxQueued}
}

func (h *hub) subscribe(id string) *subscription {
	s := &subscription{ch: make(chan batch, subBuffer), poke: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[id] == nil {
		h.subs[id] = map[*subscription]struct{}{}
		h.peak = max(h.peak, len(h.subs))
	}
	h.subs[id][s] = struct{}{}
	return s
}

// compact rebuilds the map of followed handlers if it fell far below its
// peak (see shrink.Map); it reports whether it did.
func (h *hub) compact() bool {
	return shrink.Locked(&h.mu, &h.subs, &h.peak)
}

func (h *hub) unsubscribe(id string, s *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[id][s]; ok {
		delete(h.subs[id], s)
		if len(h.subs[id]) == 0 {
			delete(h.subs, id)
		}
		close(s.ch)
	}
}

// publish hands a commit's records of handler id, size bytes encoded, to
// its subscribers.
func (h *hub) publish(id string, recs []*wfdv1.Record, size int64) {
	if len(recs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	b := batch{recs: recs, size: size}
	for s := range h.subs[id] {
		if s.queued.Add(size) <= h.maxQueued || s.queued.Load() == size {
			select {
			case s.ch <- b:
				continue
			default:
			}
		}
		// Too slow (too many batches, or too many bytes, queued; one
		// batch alone is always taken): drop it; the stream notices the
		// closed channel and catches up from the store.
		delete(h.subs[id], s)
		close(s.ch)
	}
	if len(h.subs[id]) == 0 {
		delete(h.subs, id)
	}
}

// poke tells the subscribers of handler id that records of it may have
// been committed elsewhere.
func (h *hub) poke(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[id] {
		s.poked()
	}
}

// pokeAll pokes every subscriber (the commit feed may have missed
// commits).
func (h *hub) pokeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.subs {
		for s := range m {
			s.poked()
		}
	}
}

func (s *subscription) poked() {
	select {
	case s.poke <- struct{}{}:
	default: // one is pending already
	}
}

// count returns the number of live subscriptions (for stats).
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.subs {
		n += len(m)
	}
	return n
}
