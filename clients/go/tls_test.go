package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/internal/devcert"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// seen is what a recording server saw of its requests.
type seen struct {
	mu      sync.Mutex
	auth    []string // each request's Authorization header
	methods []string
	peers   []string // the client certificate's subject, "" without one
}

func (s *seen) record(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.methods = append(s.methods, r.URL.Path)
	peer := ""
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		peer = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	s.peers = append(s.peers, peer)
}

func (s *seen) snapshot() (auth, methods, peers []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...), append([]string(nil), s.methods...), append([]string(nil), s.peers...)
}

// startRecordingServer serves a real server's HTTP server, over TLS when
// cfg is set, through a wrapper that records each request's headers.
func startRecordingServer(t *testing.T, cfg *tls.Config) (string, *seen) {
	t.Helper()
	store, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Options{
		Store: store, Workflows: workflows.All(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), TLSConfig: cfg,
	})
	if err != nil {
		_ = store.Close()
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rec := &seen{}
	hs := srv.HTTPServer()
	inner := hs.Handler
	hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		inner.ServeHTTP(w, r)
	})
	done := make(chan error, 1)
	go func() {
		if cfg != nil {
			done <- hs.ServeTLS(l, "", "")
		} else {
			done <- hs.Serve(l)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(ctx) // ends streams, so Shutdown does not wait for them
		_ = hs.Shutdown(ctx)
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		if err := store.Close(); err != nil {
			t.Errorf("store Close: %v", err)
		}
	})
	return l.Addr().String(), rec
}

func TestTLSWithClientCertificateAndBearerToken(t *testing.T) {
	ca, err := devcert.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	srvPair, err := ca.Server("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	cliPair, err := ca.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	srvCert, err := srvPair.TLS()
	if err != nil {
		t.Fatal(err)
	}
	cliCert, err := cliPair.TLS()
	if err != nil {
		t.Fatal(err)
	}
	addr, rec := startRecordingServer(t, &tls.Config{
		Certificates: []tls.Certificate{srvCert}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert,
	})

	c := dial(t, addr, client.WithTLS(&tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{cliCert}}), client.WithBearerToken("s3cret"))
	h, err := c.Run(ctxT(t), "echo", map[string]any{"text": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	checkSeqs(t, drain(t, c, h.GetHandlerId(), 0), 0)

	auth, methods, peers := rec.snapshot()
	var stream bool
	for i := range auth {
		if auth[i] != "Bearer s3cret" || peers[i] != "alice" {
			t.Errorf("%s: authorization %q, client certificate %q; want the token and alice", methods[i], auth[i], peers[i])
		}
		stream = stream || strings.HasSuffix(methods[i], "/StreamEvents")
	}
	if !stream {
		t.Errorf("no StreamEvents call recorded: %v", methods)
	}
}

func TestBearerTokenInPlaintextOnlyToLoopback(t *testing.T) {
	for _, tc := range []struct {
		target string
		tls    bool
		ok     bool
	}{
		{"127.0.0.1:7233", false, true},
		{"localhost:7233", false, true},
		{"[::1]:7233", false, true},
		{"dns:///localhost:7233", false, true},
		{"unix:///run/wfd.sock", false, true},
		{"10.1.2.3:7233", false, false},
		{"wfd.example:7233", false, false},
		{"dns:///wfd.example:7233", false, false},
		{"wfd.example:7233", true, true},
	} {
		t.Run(tc.target, func(t *testing.T) {
			opts := []client.Option{client.WithBearerToken("s3cret")}
			if tc.tls {
				opts = append(opts, client.WithTLS(nil))
			}
			c, err := client.Dial(tc.target, opts...)
			if err == nil {
				_ = c.Close()
			}
			if tc.ok != (err == nil) {
				t.Fatalf("Dial: %v, want success %v", err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "TLS") {
				t.Fatalf("Dial error %q does not say TLS is needed", err)
			}
		})
	}
}

func TestBearerTokenReachesAPlaintextLoopbackServer(t *testing.T) {
	addr, rec := startRecordingServer(t, nil)
	c := dial(t, addr, client.WithBearerToken("local"))
	if _, err := c.Workflows(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if auth, _, _ := rec.snapshot(); len(auth) != 1 || auth[0] != "Bearer local" {
		t.Fatalf("authorization headers %q, want one Bearer local", auth)
	}
}
