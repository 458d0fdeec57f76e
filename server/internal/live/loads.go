package live

import (
	"sync"

	"github.com/wfd-dev/wfd/engine"
)

// loadCall is one load of a handler into memory that concurrent callers
// share (or a start, or a hand-over, which callers wait for the same way).
type loadCall struct {
	done chan struct{}
	// accepting is the outside event the load is for (nil for none); its
	// identity tells the callers sharing the load whose event a refusal
	// refused.
	accepting *engine.Event
	h         *engine.Handler
	err       error
}

// loads are the claims on handlers being loaded, started or handed over:
// one per handler id. A claim is what keeps two loads of one handler from
// running at once, a hand-over from taking a handler being loaded, and a
// claimed lease from being freed under a load that uses it.
type loads struct {
	mu sync.Mutex
	m  map[string]*loadCall
}

// join returns the claim on id, making a new one for a load of accepting
// if there is none (isNew reports which); ready, checked under the lock
// first, answers without a claim (the handler is in memory).
func (l *loads) join(id string, accepting *engine.Event, ready func() bool) (got *loadCall, isNew, isReady bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ready() {
		return nil, false, true
	}
	if got, ok := l.m[id]; ok {
		return got, false, false
	}
	c := &loadCall{done: make(chan struct{}), accepting: accepting}
	l.m[id] = c
	return c, true, false
}

// claim makes c the claim on id if there is none and may(), checked under
// the lock, allows it.
func (l *loads) claim(id string, c *loadCall, may func() bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, busy := l.m[id]; busy || !may() {
		return false
	}
	l.m[id] = c
	return true
}

// claimOrCurrent makes c the claim on id if there is none, and returns
// nil; otherwise it returns the claim that holds id.
func (l *loads) claimOrCurrent(id string, c *loadCall) *loadCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	if busy, ok := l.m[id]; ok {
		return busy
	}
	l.m[id] = c
	return nil
}

// finish ends the claim c on id with its outcome; those waiting for it
// go on.
func (l *loads) finish(id string, c *loadCall, h *engine.Handler, err error) {
	c.h, c.err = h, err
	l.mu.Lock()
	delete(l.m, id)
	l.mu.Unlock()
	close(c.done)
}

// unclaimed runs fn under the lock if nothing claims id.
func (l *loads) unclaimed(id string, fn func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, busy := l.m[id]; !busy {
		fn()
	}
}
