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

	"connectrpc.com/grpcreflect"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/wfd-dev/wfd/server/internal/observe"
)

// Defaults of the connection limits (Options).
const (
	DefaultMaxConnections          = 10000
	DefaultMaxStreamsPerConnection = 250
	DefaultReadBodyTimeout         = 30 * time.Second
	DefaultMinBodyRate             = 1 << 10
	DefaultIdleConnTimeout         = 2 * time.Minute
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
	refused *observe.LogThrottle
}

func newLimitListener(l net.Listener, max int, log *slog.Logger) net.Listener {
	return &limitListener{Listener: l, slots: make(chan struct{}, max), log: log, refused: observe.NewLogThrottle(refusedLogEvery, time.Now)}
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
		if ok, suppressed := l.refused.Allow(); ok {
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

// guardBodies bounds the time a request body may take, and closes an
// HTTP/1.x connection whose request body was not read to its end.
//
// The time: with timeout > 0 a body's reads carry a read deadline
// (http.ResponseController), which starts timeout after the request
// arrived. Every read that brings bytes moves it on by what those bytes
// are worth at rate (n/rate seconds), but never to more than timeout
// ahead. So a body that sends nothing for timeout, or that arrives slower
// than rate bytes a second on average (a byte every 5 s, say, which no
// stall timeout would catch), fails its read with os.ErrDeadlineExceeded,
// and its call with DeadlineExceeded. Without a rate (rate <= 0, or a
// procedure in streamed, whose request is a stream the client sends over
// time) any byte moves the deadline to timeout ahead: only a stall is cut.
// The deadline is cleared at the body's end, so a stream that has its
// request lives on however long.
//
// The close: net/http reads what is left of an unread HTTP/1.x body
// after the handler (up to 256 KiB, to reuse the connection), without a
// deadline: a refused call (403, 404, 401 on a stream, 413) whose body
// never comes would keep its connection and goroutine for ever. So once
// the handler is done with a body not read to its end, the answer says
// Connection: close and the read deadline is set to now: net/http gives
// up reading at once and closes the connection. Over HTTP/2 the server
// resets the stream itself, and the connection goes on.
func guardBodies(next http.Handler, timeout time.Duration, rate int, streamed map[string]bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		now := time.Now()
		b := &guardedBody{ReadCloser: r.Body, rc: http.NewResponseController(w), start: now, last: now}
		if timeout > 0 {
			b.window = timeout
			if rate > 0 && !streamed[r.URL.Path] {
				b.rate = int64(rate)
			}
			b.due = now.Add(timeout)
			b.push()
		}
		// A copy of the request: net/http keeps the original, and looks at
		// its body after the handler (to close a connection whose body was
		// not read to the end).
		r2 := *r
		r2.Body = b
		if r.ProtoMajor < 2 {
			w = &closingWriter{ResponseWriter: w, body: b}
		}
		next.ServeHTTP(w, &r2)
		if r.ProtoMajor < 2 && !b.eof.Load() {
			w.Header().Set("Connection", "close")
			_ = b.rc.SetReadDeadline(time.Now())
		}
	})
}

// closingWriter is the answer to an HTTP/1.x request with a body: an
// answer begun before the body was read to its end (a call refused
// before its request is read: a stream without credentials, say) says
// Connection: close, as the connection will close after it (guardBodies);
// said only afterwards, a client could send its next call on the
// closing connection. Calls that are served read their request to its
// end first (connect checks a unary request has no second message).
type closingWriter struct {
	http.ResponseWriter
	body    *guardedBody
	started bool
}

func (c *closingWriter) begin() {
	if !c.started {
		c.started = true
		if !c.body.eof.Load() {
			c.Header().Set("Connection", "close")
		}
	}
}

func (c *closingWriter) WriteHeader(code int) {
	c.begin()
	c.ResponseWriter.WriteHeader(code)
}

func (c *closingWriter) Write(b []byte) (int, error) {
	c.begin()
	return c.ResponseWriter.Write(b)
}

// Flush is http.Flusher's: connect flushes stream messages.
func (c *closingWriter) Flush() {
	c.begin()
	_ = http.NewResponseController(c.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (c *closingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

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
	rate   int64         // bytes a second; 0: none
	start  time.Time     // when the request arrived
	last   time.Time     // when bytes last came
	read   int64         // bytes read
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
		b.credit(n, now)
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

// credit moves the deadline on for n bytes read at now.
func (b *guardedBody) credit(n int, now time.Time) {
	b.read += int64(n)
	b.last = now
	limit := now.Add(b.window)
	if b.rate > 0 {
		if due := b.due.Add(time.Duration(int64(n) * int64(time.Second) / b.rate)); due.Before(limit) {
			b.due = due
			return
		}
	}
	b.due = limit
}

// tooSlow is the error of a read whose deadline passed at now.
func (b *guardedBody) tooSlow(now time.Time) error {
	if idle := now.Sub(b.last); b.rate == 0 || idle >= b.window/2 {
		return fmt.Errorf("request body stalled for %v: %w", idle.Round(time.Millisecond), os.ErrDeadlineExceeded)
	}
	return fmt.Errorf("request body too slow: %d bytes in %v, under the minimum of %d bytes a second: %w",
		b.read, now.Sub(b.start).Round(time.Millisecond), b.rate, os.ErrDeadlineExceeded)
}

// streamedRequests are the procedures of services whose requests are
// streams (client or bidi streaming): the minimum body rate does not apply
// to them, since their clients send when they have something to say.
func streamedRequests(services ...string) map[string]bool {
	out := map[string]bool{}
	for _, name := range services {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			continue
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			continue
		}
		for i := range sd.Methods().Len() {
			if m := sd.Methods().Get(i); m.IsStreamingClient() {
				out["/"+name+"/"+string(m.Name())] = true
			}
		}
	}
	// grpcreflect registers its descriptors under another package name
	// (connectext.); its one method is a bidi stream.
	for _, name := range []string{grpcreflect.ReflectV1ServiceName, grpcreflect.ReflectV1AlphaServiceName} {
		out["/"+name+"/ServerReflectionInfo"] = true
	}
	return out
}
