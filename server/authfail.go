package server

import (
	"net"
	"sync"
	"time"

	"github.com/wfd-dev/wfd/server/internal/observe"
)

// Failed authentications, by client address. A client that keeps
// presenting credentials that do not verify (guessing tokens; a call with
// none is not a guess) is refused
// without a look at its credentials once it has failed authFailLimit
// times within authFailWindow, until the window that began with its first
// failure ends: ResourceExhausted, with the time to wait. Every refusal
// (unauthenticated, permission denied, throttled) is logged at INFO with
// the client's address, at most one line a second, with the count of the
// lines held back.
const (
	authFailLimit  = 30
	authFailWindow = time.Minute
	// authFailTracked bounds the addresses remembered; past it, those
	// whose window ended are forgotten first.
	authFailTracked = 10000
)

type authFailures struct {
	now func() time.Time
	log *observe.LogThrottle

	mu     sync.Mutex
	byHost map[string]*failWindow
}

type failWindow struct {
	start time.Time
	n     int
}

func newAuthFailures(now func() time.Time) *authFailures {
	return &authFailures{now: now, log: observe.NewLogThrottle(time.Second, now), byHost: map[string]*failWindow{}}
}

// host is the address part of a peer's host:port.
func host(peer string) string {
	if h, _, err := net.SplitHostPort(peer); err == nil {
		return h
	}
	return peer
}

// blocked reports whether the client at peer has failed too often, and
// how long until it may try again.
func (f *authFailures) blocked(peer string) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, ok := f.byHost[host(peer)]
	if !ok || w.n < authFailLimit {
		return 0, false
	}
	left := w.start.Add(authFailWindow).Sub(f.now())
	if left <= 0 {
		delete(f.byHost, host(peer))
		return 0, false
	}
	return left, true
}

// failed counts a failed authentication of the client at peer.
func (f *authFailures) failed(peer string) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	h := host(peer)
	w, ok := f.byHost[h]
	if !ok || now.Sub(w.start) >= authFailWindow {
		if !ok && len(f.byHost) >= authFailTracked {
			f.forgetEndedLocked(now)
		}
		w = &failWindow{start: now}
		f.byHost[h] = w
	}
	w.n++
}

// forgetEndedLocked drops the addresses whose window has ended, or, if
// none has, the whole table (a flood from that many addresses is not
// slowed by it anyway).
func (f *authFailures) forgetEndedLocked(now time.Time) {
	for h, w := range f.byHost {
		if now.Sub(w.start) >= authFailWindow {
			delete(f.byHost, h)
		}
	}
	if len(f.byHost) >= authFailTracked {
		clear(f.byHost)
	}
}
