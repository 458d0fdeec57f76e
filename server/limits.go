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

// limitBodyStall fails a request body read that gets no bytes for timeout:
// a client that sends its headers and then nothing no longer holds a
// handler (and its connection, for HTTP/1.1) for ever. The deadline runs
// only while a read waits, so a stream whose handler has its request and
// no longer reads is not affected, however long it lasts.
func limitBodyStall(next http.Handler, timeout time.Duration) http.Handler {
	if timeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			// A copy of the request: net/http keeps the original, and looks
			// at its body after the handler (to close a connection whose
			// body was not read to the end).
			r2 := *r
			r2.Body = &stallBody{ReadCloser: r.Body, rc: http.NewResponseController(w), timeout: timeout}
			r = &r2
		}
		next.ServeHTTP(w, r)
	})
}

// stallBody keeps a read deadline on the body while it is read: set at the
// first read, moved on by reads (every half timeout, not at every read:
// each move is a message to the connection's goroutine), and cleared when
// the body ends, after which it no longer touches deadlines (net/http also
// clears an HTTP/1.1 connection's at the end of the body, where it starts
// to watch for the client hanging up; a deadline left on it would end the
// connection under a stream). Handlers read a body in one go, so a
// deadline that passes between two reads is a stall too. One that passed
// stays: net/http then reads no more of a stalled HTTP/1.1 body after the
// handler (it would otherwise try to, without a deadline, to reuse the
// connection) and closes the connection.
type stallBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	armed   time.Time // when the deadline was last set; zero: not yet
	err     error     // the read that timed out; nil while the body flows
	ended   bool      // the body ended (or failed): no more deadlines
	off     bool      // the ResponseWriter cannot set deadlines
}

func (b *stallBody) Read(p []byte) (int, error) {
	switch {
	case b.err != nil:
		return 0, b.err
	case b.off, b.ended:
		return b.ReadCloser.Read(p)
	}
	if now := time.Now(); now.Sub(b.armed) > b.timeout/2 {
		if err := b.rc.SetReadDeadline(now.Add(b.timeout)); err != nil {
			// An embedder's ResponseWriter that cannot set deadlines.
			b.off = errors.Is(err, http.ErrNotSupported)
			return b.ReadCloser.Read(p)
		}
		b.armed = now
	}
	n, err := b.ReadCloser.Read(p)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		// Not err itself: its message names the connection's addresses.
		b.err = fmt.Errorf("request body stalled for %v: %w", b.timeout, os.ErrDeadlineExceeded)
		return n, b.err
	case err != nil:
		b.ended = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
