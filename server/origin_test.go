package server_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

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

// TestRefusedHostWithAStalledBody: a request from a refused Host is
// answered 403 at once, even when its body never comes (HTTP/1.1 would
// otherwise wait for the rest of the body before answering).
func TestRefusedHostWithAStalledBody(t *testing.T) {
	ts := startServer(t, serverConfig{options: func(o *server.Options) {
		o.AllowedHosts, o.AllowedOrigins = server.LoopbackDefaults("127.0.0.1")
	}})
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := io.WriteString(c, "POST /wfd.v1.WorkflowService/RunWorkflow HTTP/1.1\r\nHost: evil.example\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"workflow\":"); err != nil {
		t.Fatal(err)
	}
	// The body stays unfinished: only a server that answers without it
	// gets past this read before the test's timeout.
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusForbidden || !res.Close {
		t.Fatalf("status %d, close %v: want 403 and the connection closed", res.StatusCode, res.Close)
	}
}
