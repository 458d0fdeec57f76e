package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
)

// patience bounds every wait in these tests: generous, so a busy machine
// does not fail them; the limits under test are far shorter.
const patience = testwait.Timeout

// serveWith serves a server with opts (Store defaults to a fresh bbolt
// file) on a loopback port until the test ends, and returns its address.
func serveWith(t *testing.T, opts server.Options) string {
	t.Helper()
	if opts.Store == nil {
		store, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		opts.Store = store
	}
	if opts.Workflows == nil {
		opts.Workflows = testWorkflows()
	}
	srv, err := server.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l, 5*time.Second) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return l.Addr().String()
}

// h2conn is a raw HTTP/2 client connection, to do what well-behaved
// clients never do: stall a body, open more streams than allowed.
type h2conn struct {
	t  *testing.T
	c  net.Conn
	fr *http2.Framer
	// maxStreams is the server's SETTINGS_MAX_CONCURRENT_STREAMS.
	maxStreams uint32
}

// dialH2 opens a connection and reads the server's settings; ack says
// whether to acknowledge them.
func dialH2(t *testing.T, addr string, ack bool) *h2conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(patience))
	h := &h2conn{t: t, c: c, fr: http2.NewFramer(c, c)}
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := h.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the server's settings: %v", err)
		}
		if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
			if v, ok := s.Value(http2.SettingMaxConcurrentStreams); ok {
				h.maxStreams = v
			}
			break
		}
	}
	if ack {
		if err := h.fr.WriteSettingsAck(); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// open starts a gRPC call on stream id and sends body without ending the
// stream: the server waits for the rest.
func (h *h2conn) open(id uint32, procedure string, body []byte) {
	h.t.Helper()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":authority", "wfd"}, {":path", procedure},
		{"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		h.t.Fatal(err)
	}
	if len(body) > 0 {
		if err := h.fr.WriteData(id, false, body); err != nil {
			h.t.Fatal(err)
		}
	}
}

// end is how a stream ended: reset (with a code) or answered.
type end struct {
	reset      bool
	code       http2.ErrCode
	grpcStatus string
}

// waitEnds reads frames until every stream in ids has ended (a RST_STREAM,
// or a frame with END_STREAM), or fails the test after patience.
func (h *h2conn) waitEnds(ids ...uint32) map[uint32]end {
	h.t.Helper()
	_ = h.c.SetReadDeadline(time.Now().Add(patience))
	want := map[uint32]bool{}
	for _, id := range ids {
		want[id] = true
	}
	out := map[uint32]end{}
	status := map[uint32]string{}
	for len(out) < len(want) {
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.t.Fatalf("waiting for streams %v to end (ended: %v): %v", ids, out, err)
		}
		id := f.Header().StreamID
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if want[id] {
				out[id] = end{reset: true, code: f.ErrCode}
			}
		case *http2.MetaHeadersFrame:
			if s := f.PseudoValue("status"); s != "" && s != "200" {
				status[id] = "http " + s
			}
			for _, hf := range f.RegularFields() {
				if hf.Name == "grpc-status" {
					status[id] = hf.Value
				}
			}
			if want[id] && f.StreamEnded() {
				out[id] = end{grpcStatus: status[id]}
			}
		case *http2.DataFrame:
			if want[id] && f.StreamEnded() {
				out[id] = end{grpcStatus: status[id]}
			}
		case *http2.GoAwayFrame:
			h.t.Fatalf("GOAWAY %v while waiting for streams %v", f.ErrCode, ids)
		}
	}
	return out
}

// alive checks that the connection still answers a PING.
func (h *h2conn) alive() {
	h.t.Helper()
	data := [8]byte{'w', 'f', 'd'}
	if err := h.fr.WritePing(false, data); err != nil {
		h.t.Fatal(err)
	}
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.t.Fatalf("waiting for the PING's answer: %v", err)
		}
		if p, ok := f.(*http2.PingFrame); ok && p.IsAck() && p.Data == data {
			return
		}
	}
}

// TestStalledBodyIsCut sends a call's headers and part of its body, then
// nothing: the server fails the call once the body has stalled for
// ReadBodyTimeout (and closes an HTTP/1.1 connection), over HTTP/1.1 and
// HTTP/2, for a unary call and a server stream.
func TestStalledBodyIsCut(t *testing.T) {
	addr := serveWith(t, server.Options{ReadBodyTimeout: 200 * time.Millisecond})
	partial := []byte{0, 0, 0, 0, 40, '{'} // a gRPC frame of 40 bytes, 1 sent

	t.Run("http1", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		_, err = io.WriteString(c, "POST /wfd.v1.WorkflowService/RunWorkflow HTTP/1.1\r\nHost: wfd\r\n"+
			"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"workflow\":")
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(patience))
		res, err := io.ReadAll(c) // the answer, then the end of the connection
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("the connection was not closed: %v (read %q)", err, res)
		}
		if len(res) > 0 && !bytes.Contains(res, []byte("deadline_exceeded")) {
			t.Fatalf("answer %q, want deadline_exceeded", res)
		}
		t.Logf("answer: %q", firstLine(res))
	})
	for _, tc := range []struct{ name, procedure string }{
		{"http2 unary", wfdv1connect.WorkflowServiceRunWorkflowProcedure},
		{"http2 server stream", wfdv1connect.WorkflowServiceStreamEventsProcedure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := dialH2(t, addr, true)
			h.open(1, tc.procedure, partial)
			e := h.waitEnds(1)[1]
			if !e.reset && e.grpcStatus != "4" {
				t.Fatalf("stream ended %+v, want reset or DEADLINE_EXCEEDED (4)", e)
			}
			t.Logf("stream ended: %+v", e)
			h.alive()
		})
	}
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// TestSlowBodyIsNotCut: the body timeout bounds a stall, not the whole
// body: a body that trickles in over several timeouts, never pausing for
// one and keeping up MinBodyRate (about 20 bytes a second against 4), is
// read to the end and the call succeeds.
func TestSlowBodyIsNotCut(t *testing.T) {
	const timeout = 2 * time.Second
	addr := serveWith(t, server.Options{ReadBodyTimeout: timeout, MinBodyRate: 4})
	msg, err := proto.Marshal(&wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "a-body-that-trickles-in-for-a-while"})
	if err != nil {
		t.Fatal(err)
	}
	body := append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...)
	h := dialH2(t, addr, true)
	h.open(1, wfdv1connect.WorkflowServiceRunWorkflowProcedure, nil)
	// 20 pieces, one every timeout/8: 2.5 timeouts in all.
	piece := (len(body) + 19) / 20
	for len(body) > 0 {
		n := min(piece, len(body))
		if err := h.fr.WriteData(1, n == len(body), body[:n]); err != nil {
			t.Fatal(err)
		}
		body = body[n:]
		time.Sleep(timeout / 8)
	}
	if e := h.waitEnds(1)[1]; e.reset || e.grpcStatus != "0" {
		t.Fatalf("a slow body: %+v, want grpc-status 0", e)
	}
}

// TestStreamsOutliveBodyTimeout: the body timeout and the minimum body
// rate run only while the server reads the body, so a stream that has its
// request stays open past them, over HTTP/2 and HTTP/1.1 (where the
// deadline is the connection's); and a connection with a stream open is
// not idle, however short IdleConnTimeout. (The timeout is long enough
// that a busy machine cannot make the body's reads themselves late.)
func TestStreamsOutliveBodyTimeout(t *testing.T) {
	const timeout = 500 * time.Millisecond
	addr := serveWith(t, server.Options{ReadBodyTimeout: timeout, MinBodyRate: 1 << 20, IdleConnTimeout: 2 * timeout, Heartbeat: timeout / 2})
	var h1 http.Protocols
	h1.SetHTTP1(true)
	for _, tc := range []struct {
		name   string
		client *http.Client
		opts   []connect.ClientOption
	}{
		{"http2 grpc", h2cClient(), []connect.ClientOption{connect.WithGRPC()}},
		{"http1 connect", &http.Client{Transport: &http.Transport{Protocols: &h1}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := wfdv1connect.NewWorkflowServiceClient(tc.client, "http://"+addr, tc.opts...)
			h := run(t, c, "approval", nil)
			s, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: h.HandlerId, IncludeInternal: true})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			// Heartbeats keep coming for four times the body timeout.
			start := time.Now()
			for time.Since(start) < 4*timeout {
				if !s.Receive() {
					t.Fatalf("stream ended after %v: %v", time.Since(start), s.Err())
				}
			}
		})
	}
}

// TestConnectionLimit: with MaxConnections open, the server closes the
// next connection at once; once one closes, a new one is served.
func TestConnectionLimit(t *testing.T) {
	addr := serveWith(t, server.Options{MaxConnections: 2})
	first := dialH2(t, addr, true) // served: it got the server's settings
	dialH2(t, addr, true)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(patience))
	_, _ = io.WriteString(c, http2.ClientPreface)
	if n, err := c.Read(make([]byte, 64)); err == nil || isTimeout(err) {
		t.Fatalf("a connection past the limit was served: read %d bytes, %v", n, err)
	}

	if err := first.c.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(patience)
	for !servedWithin(addr) {
		if time.Now().After(deadline) {
			t.Fatal("no connection served after one of the two closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// servedWithin reports whether a new connection gets the server's
// settings (rather than being closed).
func servedWithin(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(patience))
	fr := http2.NewFramer(c, c)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		return false
	}
	if fr.WriteSettings() != nil {
		return false
	}
	f, err := fr.ReadFrame()
	_, ok := f.(*http2.SettingsFrame)
	return err == nil && ok
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestStreamLimit: the server advertises MaxStreamsPerConnection, keeps
// that many calls open, and resets a stream past it: REFUSED_STREAM while
// the client may not have seen the limit yet (it has not acknowledged the
// settings), a protocol error once it has; the connection and its calls
// go on.
func TestStreamLimit(t *testing.T) {
	const max = 3
	addr := serveWith(t, server.Options{MaxStreamsPerConnection: max})
	for _, tc := range []struct {
		name string
		ack  bool
		want http2.ErrCode
	}{
		{"settings not acknowledged", false, http2.ErrCodeRefusedStream},
		{"settings acknowledged", true, http2.ErrCodeProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := dialH2(t, addr, tc.ack)
			if h.maxStreams != max {
				t.Fatalf("SETTINGS_MAX_CONCURRENT_STREAMS %d, want %d", h.maxStreams, max)
			}
			// max calls waiting for their bodies (the default body timeout
			// is far away), then one more.
			for i := range uint32(max + 1) {
				h.open(2*i+1, wfdv1connect.WorkflowServiceRunWorkflowProcedure, nil)
			}
			over := uint32(2*max + 1)
			if e := h.waitEnds(over)[over]; !e.reset || e.code != tc.want {
				t.Fatalf("stream past the limit: %+v, want reset %v", e, tc.want)
			}
			h.alive()
			// A call within the limit ends: a new one is served in full.
			if err := h.fr.WriteRSTStream(1, http2.ErrCodeCancel); err != nil {
				t.Fatal(err)
			}
			next := over + 2
			h.open(next, wfdv1connect.WorkflowServiceRunWorkflowProcedure, nil)
			msg, err := proto.Marshal(&wfdv1.RunWorkflowRequest{Workflow: "echo"})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.fr.WriteData(next, true, append(binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg))), msg...)); err != nil {
				t.Fatal(err)
			}
			if e := h.waitEnds(next)[next]; e.reset || e.grpcStatus != "0" {
				t.Fatalf("a call within the limit: %+v, want grpc-status 0", e)
			}
		})
	}
}
