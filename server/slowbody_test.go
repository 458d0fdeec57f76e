package server_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/net/http2"
	"google.golang.org/protobuf/proto"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/server"
)

// trickle writes a byte to c every interval until stop is closed or a
// write fails, and closes done when it returns.
func trickle(c net.Conn, interval time.Duration, stop <-chan struct{}) (done <-chan struct{}) {
	d := make(chan struct{})
	go func() {
		defer close(d)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := c.Write([]byte{'x'}); err != nil {
				return
			}
		}
	}()
	return d
}

// TestTrickledBodyIsCut: a body that never stalls for long but arrives far
// slower than MinBodyRate (a byte every 50 ms, 20 bytes a second, against
// 1000) fails its call once ReadBodyTimeout's grace and what its bytes
// paid for have passed, and the server closes an HTTP/1.1 connection (the
// stall timeout alone would keep it open as long as the bytes come).
func TestTrickledBodyIsCut(t *testing.T) {
	const window = time.Second
	addr := serveWith(t, server.Options{ReadBodyTimeout: window, MinBodyRate: 1000})

	t.Run("http1", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		_, err = io.WriteString(c, "POST /wfd.v1.WorkflowService/RunWorkflow HTTP/1.1\r\nHost: wfd\r\n"+
			"Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"workflow\":\"echo\",\"handler_id\":\"")
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		stop := make(chan struct{})
		done := trickle(c, 50*time.Millisecond, stop)
		res := readUntilClosed(t, c)
		close(stop)
		<-done
		if len(res) > 0 && !bytes.Contains(res, []byte("deadline_exceeded")) {
			t.Fatalf("answer %q, want deadline_exceeded", res)
		}
		t.Logf("cut after %v: %q", time.Since(began).Round(time.Millisecond), firstLine(res))
	})

	t.Run("http2", func(t *testing.T) {
		h := dialH2(t, addr, true)
		h.open(1, wfdv1connect.WorkflowServiceRunWorkflowProcedure, []byte{0, 0, 1, 0, 0}) // a gRPC frame of 64 KiB, none of it sent
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if h.fr.WriteData(1, false, []byte{'x'}) != nil {
					return
				}
			}
		}()
		e := h.waitEnds(1)[1]
		close(stop)
		<-done
		if !e.reset && e.grpcStatus != "4" {
			t.Fatalf("stream ended %+v, want reset or DEADLINE_EXCEEDED (4)", e)
		}
		h.alive() // only the stream ended
	})
}

// TestStreamedRequestsHaveNoMinimumRate: a bidi stream's requests come
// when its client has something to ask (here gRPC reflection, a few bytes
// every tenth of ReadBodyTimeout, far below MinBodyRate): the rate does
// not apply to them, only the stall timeout, and the stream goes on for
// two timeouts (where the rate would have cut it after one).
func TestStreamedRequestsHaveNoMinimumRate(t *testing.T) {
	const window = 3 * time.Second
	addr := serveWith(t, server.Options{ReadBodyTimeout: window, MinBodyRate: 1 << 20})
	h := dialH2(t, addr, true)
	_ = h.c.SetDeadline(time.Now().Add(patience))
	h.open(1, "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", nil)
	// ServerReflectionRequest{list_services: ""} in a gRPC frame.
	list := []byte{0, 0, 0, 0, 2, 0x3a, 0}
	start := time.Now()
	for i := 0; time.Since(start) < 2*window; i++ {
		if i > 0 {
			time.Sleep(window / 10) // the client's pace, not a wait for the server
		}
		if err := h.fr.WriteData(1, false, list); err != nil {
			t.Fatal(err)
		}
		for answered := false; !answered; {
			f, err := h.fr.ReadFrame()
			if err != nil {
				t.Fatalf("request %d, after %v: %v", i, time.Since(start), err)
			}
			switch f := f.(type) {
			case *http2.DataFrame:
				answered = f.StreamID == 1 && len(f.Data()) > 0
			case *http2.RSTStreamFrame:
				t.Fatalf("request %d, after %v: stream reset %v", i, time.Since(start), f.ErrCode)
			case *http2.MetaHeadersFrame:
				if f.StreamEnded() {
					t.Fatalf("request %d, after %v: stream ended %v", i, time.Since(start), f.RegularFields())
				}
			}
		}
	}
	if err := h.fr.WriteData(1, true, nil); err != nil {
		t.Fatal(err)
	}
	if e := h.waitEnds(1)[1]; e.reset || e.grpcStatus != "0" {
		t.Fatalf("stream ended %+v, want grpc-status 0", e)
	}
}

// TestFullSpeedBodiesAreUnaffected: a large request sent at full speed
// succeeds (900 KiB, which at the minimum rate would take 14 s, over
// three times the window), and an HTTP/1.1 connection whose calls read
// their bodies is kept for the next call.
func TestFullSpeedBodiesAreUnaffected(t *testing.T) {
	addr := serveWith(t, server.Options{ReadBodyTimeout: 4 * time.Second, MinBodyRate: 64 << 10})
	big := strings.Repeat("x", 900<<10)
	var h1 http.Protocols
	h1.SetHTTP1(true)
	for _, tc := range []struct {
		name   string
		client *http.Client
		opts   []connect.ClientOption
	}{
		{"http1 connect", &http.Client{Transport: &http.Transport{Protocols: &h1}}, nil},
		{"http2 grpc", h2cClient(), []connect.ClientOption{connect.WithGRPC()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := wfdv1connect.NewWorkflowServiceClient(tc.client, "http://"+addr, tc.opts...)
			var mu sync.Mutex
			var reused []bool
			trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
				mu.Lock()
				defer mu.Unlock()
				reused = append(reused, i.Reused)
			}}
			for range 2 {
				ctx := httptrace.WithClientTrace(ctxT(t), trace)
				if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", Input: st(t, map[string]any{"s": big})}); err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reused) != 2 || !reused[1] {
				t.Fatalf("connections reused: %v, want the second call on the first call's connection", reused)
			}
		})
	}
}

// TestIdleConnectionsAreClosed: a connection with no call in progress is
// closed after IdleConnTimeout: an HTTP/1.1 keep-alive connection between
// requests, an HTTP/2 connection without streams (GOAWAY, then closed).
// (No pings: an unanswered one would close the HTTP/2 connection too.)
func TestIdleConnectionsAreClosed(t *testing.T) {
	const idle = 300 * time.Millisecond
	addr := serveWith(t, server.Options{IdleConnTimeout: idle, PingTimeout: -1})

	t.Run("http1", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(patience))
		br := bufio.NewReader(c)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		if res.StatusCode != http.StatusOK || res.Close {
			t.Fatalf("status %d, close %v: want 200, kept alive", res.StatusCode, res.Close)
		}
		since := time.Now()
		if b, err := br.ReadByte(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("idle connection: read %q, %v; want it closed", b, err)
		}
		t.Logf("closed %v after the answer", time.Since(since).Round(time.Millisecond))
	})

	t.Run("http2", func(t *testing.T) {
		h := dialH2(t, addr, true)
		since := time.Now()
		goAway := false
		for {
			f, err := h.fr.ReadFrame()
			if err != nil {
				if err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
					t.Fatalf("idle connection: %v; want it closed", err)
				}
				break
			}
			if g, ok := f.(*http2.GoAwayFrame); ok {
				if g.ErrCode != http2.ErrCodeNo {
					t.Fatalf("GOAWAY %v, want NO_ERROR", g.ErrCode)
				}
				goAway = true
			}
		}
		if !goAway {
			t.Fatal("closed without a GOAWAY")
		}
		t.Logf("closed %v after the settings", time.Since(since).Round(time.Millisecond))
	})
}

// TestRefusedStreamSaysClose: a streaming call refused before its
// request is read (no credentials) leaves its HTTP/1.1 body unread, so
// the connection closes after the answer; the answer says so
// (Connection: close), or the client's next call may meet the connection
// closing. A streaming call whose request is read keeps the connection.
func TestRefusedStreamSaysClose(t *testing.T) {
	ts := startAuthServer(t, newJWTIssuer(t), "")
	msg, err := proto.Marshal(&wfdv1.StreamEventsRequest{HandlerId: "no-such-handler"})
	if err != nil {
		t.Fatal(err)
	}
	var h1 http.Protocols
	h1.SetHTTP1(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: &h1}}
	for _, tc := range []struct {
		name, token string
		closes      bool
	}{
		{"refused", "", true},
		{"read", "reader-token", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, "http://"+ts.addr+wfdv1connect.WorkflowServiceStreamEventsProcedure,
				bytes.NewReader(frame(0, -1, msg)))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/grpc-web+proto")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			res, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.Close != tc.closes {
				t.Fatalf("answer (%s, grpc-status %q%q) says Connection: close = %v, want %v", res.Status,
					res.Header.Get("Grpc-Status"), res.Trailer.Get("Grpc-Status"), res.Close, tc.closes)
			}
		})
	}
}
