package server_test

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/console"
	"github.com/wfd-dev/wfd/internal/devcert"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// TestConsoleListener: ServeWithConsole serves the console at /ui/ on its
// own listener, redirects / there, and answers the API there too; a page
// calling from the console's own origin passes the Origin check even when
// no origin is allowed, a foreign origin and a foreign Host are still
// refused, and the API port keeps refusing that origin. Shutting down
// stops both listeners.
func TestConsoleListener(t *testing.T) {
	store, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	srv, err := server.New(context.Background(), server.Options{
		Store: store, Workflows: workflows.All(), Console: console.Handler(nil),
		// As the command line does on a non-loopback address: no browser origin.
		AllowedHosts: []string{"127.0.0.1"}, AllowedOrigins: []string{},
	})
	if err != nil {
		t.Fatal(err)
	}
	api, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeWithConsole(ctx, api, cl, 5*time.Second) }()
	consoleURL, apiURL := "http://"+cl.Addr().String(), "http://"+api.Addr().String()

	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, url, host string, headers map[string]string) (*http.Response, string) {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader("{}")
		}
		req, err := http.NewRequestWithContext(context.Background(), method, url, body)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp, string(b)
	}
	const stats = "/wfd.v1.WorkflowService/GetStats"
	own := map[string]string{"Origin": consoleURL}
	for _, tc := range []struct {
		name, method, url, host string
		headers                 map[string]string
		want                    int
		contains                string
	}{
		{"root redirects", http.MethodGet, consoleURL + "/", "", nil, http.StatusFound, ""},
		{"index", http.MethodGet, consoleURL + "/ui/", "", nil, http.StatusOK, `<div id="root">`},
		{"a page of the router", http.MethodGet, consoleURL + "/ui/handlers/h-1", "", nil, http.StatusOK, `<div id="root">`},
		{"module script from its own origin", http.MethodGet, consoleURL + "/ui/", "", own, http.StatusOK, ""},
		{"API from the console's origin", http.MethodPost, consoleURL + stats, "", own, http.StatusOK, "handlersByStatus"},
		{"API without an origin", http.MethodPost, consoleURL + stats, "", nil, http.StatusOK, "handlersByStatus"},
		{"API from a foreign origin", http.MethodPost, consoleURL + stats, "", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden, "not allowed"},
		{"API from another port's origin", http.MethodPost, consoleURL + stats, "", map[string]string{"Origin": apiURL}, http.StatusForbidden, "not allowed"},
		{"API for a foreign host", http.MethodPost, consoleURL + stats, "evil.example:" + portOf(cl), map[string]string{"Origin": "http://evil.example:" + portOf(cl)},
			http.StatusForbidden, "host"},
		{"UI for a foreign host", http.MethodGet, consoleURL + "/ui/", "evil.example", nil, http.StatusForbidden, "host"},
		{"the API port refuses the console's origin", http.MethodPost, apiURL + stats, "", own, http.StatusForbidden, "not allowed"},
		{"the API port has no console", http.MethodGet, apiURL + "/ui/", "", nil, http.StatusNotFound, ""},
		{"probes on the console port", http.MethodGet, consoleURL + "/readyz", "", nil, http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(tc.method, tc.url, tc.host, tc.headers)
			if resp.StatusCode != tc.want || !strings.Contains(body, tc.contains) {
				t.Errorf("%d %.200q, want %d containing %q", resp.StatusCode, body, tc.want, tc.contains)
			}
			if tc.want == http.StatusFound && resp.Header.Get("Location") != "/ui/" {
				t.Errorf("Location %q, want /ui/", resp.Header.Get("Location"))
			}
		})
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ServeWithConsole: %v", err)
	}
	for _, l := range []net.Listener{api, cl} {
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			_ = c.Close()
			t.Errorf("%s still accepts connections after shutdown", l.Addr())
		}
	}
}

// TestConsoleListenerTLS: with TLS on, the console's port speaks it too
// (same certificate), and its own https origin passes the Origin check.
func TestConsoleListenerTLS(t *testing.T) {
	ca, err := devcert.NewCA("wfd console test CA")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Server("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pair.TLS()
	if err != nil {
		t.Fatal(err)
	}
	store, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	srv, err := server.New(context.Background(), server.Options{
		Store: store, Workflows: workflows.All(), Console: console.Handler(nil), AllowedOrigins: []string{},
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	})
	if err != nil {
		t.Fatal(err)
	}
	api, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeWithConsole(ctx, api, cl, 5*time.Second) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeWithConsole: %v", err)
		}
	}()
	origin := "https://" + cl.Addr().String()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}, ForceAttemptHTTP2: true}}
	defer hc.CloseIdleConnections()
	for _, tc := range []struct {
		name, method, path, origin string
		want                       int
	}{
		{"index over TLS", http.MethodGet, "/ui/", "", http.StatusOK},
		{"API from its own https origin", http.MethodPost, "/wfd.v1.WorkflowService/GetStats", origin, http.StatusOK},
		{"API from its http twin", http.MethodPost, "/wfd.v1.WorkflowService/GetStats", "http://" + cl.Addr().String(), http.StatusForbidden},
	} {
		req, err := http.NewRequestWithContext(context.Background(), tc.method, origin+tc.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != tc.want || resp.TLS == nil {
			t.Errorf("%s: %d (TLS %v), want %d over TLS", tc.name, resp.StatusCode, resp.TLS != nil, tc.want)
		}
	}
}

func portOf(l net.Listener) string {
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}
