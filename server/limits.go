package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the connection limits (Options).
const (
	DefaultMaxConnections          = 10000
	DefaultMaxStreamsPerConnection = 250
	DefaultReadBodyTimeout         = 30 * time.Second
	DefaultPingTimeout             = 15 * time.Second
)

// refusedLogEvery is how often a refused connection is logged while
// connections keep coming past the limit.
const refusedLogEvery = 10 * time.Second

// limitListener closes at once the connections accepted while max are
// open: a client past the limit learns it right away (its call fails with
// Unavailable and may go elsewhere or retry) instead of waiting unseen in
// the kernel's backlog, and each costs the server an accept and a close.
type limitListener struct {
	net.Listener
	slots   chan struct{}
	log     *slog.Logger
	refused *logThrottle
}

func newLimitListener(l net.Listener, max int, log *slog.Logger) net.Listener {
	return &limitListener{Listener: l, slots: make(chan struct{}, max), log: log, refused: newLogThrottle(refusedLogEvery, time.Now)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
		}
		_ = c.Close()
		if ok, suppressed := l.refused.allow(); ok {
			l.log.Warn("connection refused: too many open connections", "max", cap(l.slots), "remote", c.RemoteAddr().String(), "suppressed", suppressed)
		}
	}
}

// limitedConn gives its slot back once, when closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// guardBodies bounds the time a request body may stall, and closes an
// HTTP/1.x connection whose request body was not read to its end.
//
// The stall: with timeout > 0 a body's reads carry a read deadline
// (http.ResponseController), which starts timeout after the request
// arrived and which every read that brings bytes moves to timeout ahead:
// a body that sends nothing for timeout fails its read with
// os.ErrDeadlineExceeded, and its call with DeadlineExceeded. The deadline
// is cleared at the body's end, so a stream that has its request lives on
// however long.
//
// The close: net/http reads what is left of an unread HTTP/1.x body
// after the handler (up to 256 KiB, to reuse the connection), without a
// deadline: a refused call (403, 404, 401 on a stream, 413) whose body
// never comes would keep its connection and goroutine for ever. So once
// the handler is done with a body not read to its end, the answer says
// Connection: close and the read deadline is set to now: net/http gives
// up reading at once and closes the connection. Over HTTP/2 the server
// resets the stream itself, and the connection goes on.
func guardBodies(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		now := time.Now()
		b := &guardedBody{ReadCloser: r.Body, rc: http.NewResponseController(w), last: now}
		if timeout > 0 {
			b.window = timeout
			b.due = now.Add(timeout)
			b.push()
		}
		// A copy of the request: net/http keeps the original, and looks at
		// its body after the handler (to close a connection whose body was
		// not read to the end).
		r2 := *r
		r2.Body = b
		next.ServeHTTP(w, &r2)
		if r.ProtoMajor < 2 && !b.eof.Load() {
			w.Header().Set("Connection", "close")
			_ = b.rc.SetReadDeadline(time.Now())
		}
	})
}

// guardedBody keeps guardBodies' read deadline on a body. It gives the
// connection a new deadline only when its own has moved on by more than
// an eighth of the window since the last one (each is a message to an
// HTTP/2 connection's goroutine), so a body may be cut up to an eighth of
// the window early. Handlers read a body in one go, so a deadline that
// passes between two reads counts too. One that passed stays: net/http
// then reads no more of a stalled HTTP/1.1 body after the handler, and
// closes the connection.
type guardedBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	window time.Duration // the timeout; 0: no deadlines
	last   time.Time     // when bytes last came
	due    time.Time     // when the body's time runs out
	set    time.Time     // the deadline the connection has
	err    error         // the read that timed out; nil while the body flows
	ended  bool          // the body ended (or failed): no more deadlines
	eof    atomic.Bool   // the body was read to its end
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.window == 0 || b.ended {
		n, err := b.ReadCloser.Read(p)
		if errors.Is(err, io.EOF) {
			b.eof.Store(true)
		}
		return n, err
	}
	if b.due.Sub(b.set) > b.window/8 {
		b.push()
	}
	n, err := b.ReadCloser.Read(p)
	now := time.Now()
	if n > 0 {
		b.last, b.due = now, now.Add(b.window)
	}
	switch {
	case err == nil:
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Not err itself: its message names the connection's addresses.
		b.err = b.tooSlow(now)
		return n, b.err
	default:
		b.ended = true
		b.eof.Store(errors.Is(err, io.EOF))
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// push gives the connection the body's deadline; a ResponseWriter that
// cannot take one (an embedder's) turns the deadlines off.
func (b *guardedBody) push() {
	if err := b.rc.SetReadDeadline(b.due); err != nil {
		if errors.Is(err, http.ErrNotSupported) {
			b.window = 0
		}
		return
	}
	b.set = b.due
}

// tooSlow is the error of a read whose deadline passed at now.
func (b *guardedBody) tooSlow(now time.Time) error {
	return fmt.Errorf("request body stalled for %v: %w", now.Sub(b.last).Round(time.Millisecond), os.ErrDeadlineExceeded)
}
