package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/server"
)

// rawCall posts an empty JSON request to path over the Connect protocol
// with the given Host and extra headers, and returns the response.
func rawCall(t *testing.T, ts *testServer, method, path, host string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, "http://"+ts.addr+path, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if host != "" {
		req.Host = host
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := ts.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

// TestHostAndOrigin: with the loopback defaults, a request for another
// Host (DNS rebinding) or from a browser page of another origin is 403
// before the API; a page from localhost gets its preflight answered and
// CORS headers on the call; health checks skip the checks.
func TestHostAndOrigin(t *testing.T) {
	ts := startServer(t, serverConfig{options: func(o *server.Options) {
		o.AllowedHosts, o.AllowedOrigins = server.LoopbackDefaults("127.0.0.1")
	}})
	const list = "/wfd.v1.WorkflowService/ListWorkflows"
	_, port, _ := strings.Cut(ts.addr, ":")
	for _, tc := range []struct {
		name, method, path, host string
		headers                  map[string]string
		want                     int
		wantHeaders              map[string]string
	}{
		{"loopback host", http.MethodPost, list, "", nil, http.StatusOK, nil},
		{"localhost host", http.MethodPost, list, "localhost:" + port, nil, http.StatusOK, nil},
		{"rebound host", http.MethodPost, list, "evil.example:" + port, nil, http.StatusForbidden, nil},
		{"unknown origin", http.MethodPost, list, "", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden, nil},
		{"unknown origin preflight", http.MethodOptions, list, "", map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
			http.StatusForbidden, nil},
		{"allowed origin preflight", http.MethodOptions, list, "", map[string]string{"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type,authorization"}, http.StatusNoContent,
			map[string]string{"Access-Control-Allow-Origin": "http://localhost:5173", "Access-Control-Allow-Headers": "Authorization", "Access-Control-Allow-Methods": "POST"}},
		{"allowed origin call", http.MethodPost, list, "", map[string]string{"Origin": "http://127.0.0.1:8080"}, http.StatusOK,
			map[string]string{"Access-Control-Allow-Origin": "http://127.0.0.1:8080", "Access-Control-Expose-Headers": "Grpc-Status"}},
		{"health, rebound host", http.MethodPost, "/grpc.health.v1.Health/Check", "evil.example", map[string]string{"Origin": "https://evil.example"}, http.StatusOK, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := rawCall(t, ts, tc.method, tc.path, tc.host, tc.headers)
			if resp.StatusCode != tc.want {
				t.Fatalf("HTTP %d, want %d", resp.StatusCode, tc.want)
			}
			for k, v := range tc.wantHeaders {
				if !strings.Contains(resp.Header.Get(k), v) {
					t.Errorf("%s: %q, want it to contain %q", k, resp.Header.Get(k), v)
				}
			}
		})
	}
}

// TestRefusedCallWithAStalledBody: a call refused before its body is read
// (a refused Host, a path nothing serves) is answered at once, even when
// its body never comes, and over HTTP/1.1 the server then closes the
// connection instead of waiting for the rest of the body (which net/http
// would otherwise try to read, without a deadline, to reuse the
// connection). Over HTTP/2 only the stream ends.
func TestRefusedCallWithAStalledBody(t *testing.T) {
	ts := startServer(t, serverConfig{options: func(o *server.Options) {
		o.AllowedHosts, o.AllowedOrigins = server.LoopbackDefaults("127.0.0.1")
	}})
	for _, tc := range []struct {
		name, request string
		want          int
	}{
		{"refused host", "POST /wfd.v1.WorkflowService/RunWorkflow HTTP/1.1\r\nHost: evil.example\r\n" +
			"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"workflow\":", http.StatusForbidden},
		{"refused host, chunked", "POST /wfd.v1.WorkflowService/RunWorkflow HTTP/1.1\r\nHost: evil.example\r\n" +
			"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{\"workflow\":\r\n", http.StatusForbidden},
		{"no such path", "POST /nothing/here HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
			"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"workflow\":", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			if _, err := io.WriteString(c, tc.request); err != nil {
				t.Fatal(err)
			}
			// The body stays unfinished: only a server that answers
			// without it, and then hangs up, gets past this read before
			// the test's timeout.
			res := readUntilClosed(t, c)
			got, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(res)), nil)
			if err != nil {
				t.Fatalf("answer %q: %v", res, err)
			}
			if got.StatusCode != tc.want || !got.Close {
				t.Fatalf("status %d, close %v: want %d and Connection: close", got.StatusCode, got.Close, tc.want)
			}
		})
	}
	t.Run("http2", func(t *testing.T) {
		h := dialH2(t, ts.addr, true)
		h.open(1, wfdv1connect.WorkflowServiceRunWorkflowProcedure, []byte{0, 0, 0, 0, 40, '{'}) // :authority wfd
		e := h.waitEnds(1)[1]
		if !e.reset && e.grpcStatus != "http 403" {
			t.Fatalf("stream ended %+v, want HTTP 403", e)
		}
		t.Logf("stream ended: %+v", e)
		// Go's server resets the stream and the connection goes on. The
		// reset is NO_ERROR (it has its answer), or STREAM_CLOSED when its
		// end of the handler races the stream's own close (1 run in 40
		// here): either way only the stream ends.
		if err := h.fr.WritePing(false, [8]byte{'w', 'f', 'd'}); err != nil {
			t.Fatal(err)
		}
		for reset, pong := false, false; !reset || !pong; {
			f, err := h.fr.ReadFrame()
			if err != nil {
				t.Fatalf("waiting for the stream's reset and the PING's answer: %v", err)
			}
			switch f := f.(type) {
			case *http2.RSTStreamFrame:
				if f.StreamID == 1 && f.ErrCode != http2.ErrCodeNo && f.ErrCode != http2.ErrCodeStreamClosed {
					t.Fatalf("stream reset %v, want NO_ERROR (or STREAM_CLOSED)", f.ErrCode)
				}
				reset = reset || f.StreamID == 1
			case *http2.PingFrame:
				pong = pong || f.IsAck()
			case *http2.GoAwayFrame:
				t.Fatalf("GOAWAY %v", f.ErrCode)
			}
		}
	})
}

// readUntilClosed reads c until the server closes it, and returns what it
// read; it fails the test if the server keeps it open for patience.
func readUntilClosed(t *testing.T, c net.Conn) []byte {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(patience))
	res, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the server did not close the connection: %v (read %q)", err, res)
	}
	return res
}
