package cli_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/cli"
	"github.com/wfd-dev/wfd/internal/devcert"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// files are a test CA, a server pair for 127.0.0.1 and a client pair, on disk.
type files struct {
	ca, serverCert, serverKey, clientCert, clientKey string
	// strangerCert and strangerKey are a client pair from another CA.
	strangerCert, strangerKey string
}

func writePKI(t *testing.T) files {
	t.Helper()
	dir := t.TempDir()
	ca, err := devcert.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := devcert.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	var f files
	if f.ca, err = ca.WriteCA(dir, "ca"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		issue     func() (devcert.Pair, error)
		name      string
		cert, key *string
	}{
		{func() (devcert.Pair, error) { return ca.Server("127.0.0.1", "localhost") }, "server", &f.serverCert, &f.serverKey},
		{func() (devcert.Pair, error) { return ca.Client("alice") }, "client", &f.clientCert, &f.clientKey},
		{func() (devcert.Pair, error) { return other.Client("mallory") }, "stranger", &f.strangerCert, &f.strangerKey},
	} {
		pair, err := p.issue()
		if err != nil {
			t.Fatal(err)
		}
		if *p.cert, *p.key, err = pair.Write(dir, p.name); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestClientFlagsAgainstATLSServe(t *testing.T) {
	f := writePKI(t)
	addr := serve(t, "--tls-cert", f.serverCert, "--tls-key", f.serverKey, "--tls-client-ca", f.ca)
	for _, tc := range []struct {
		name string
		args []string
		ok   bool
	}{
		{"CA, client certificate and token", []string{"--tls-ca", f.ca, "--tls-cert", f.clientCert, "--tls-key", f.clientKey, "--token", "s3cret"}, true},
		{"no client certificate", []string{"--tls-ca", f.ca}, false},
		{"client certificate from another CA", []string{"--tls-ca", f.ca, "--tls-cert", f.strangerCert, "--tls-key", f.strangerKey}, false},
		{"system roots", []string{"--tls", "--tls-cert", f.clientCert, "--tls-key", f.clientKey}, false},
		{"plaintext", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"workflows", "--addr", addr, "--timeout", "30s"}, tc.args...)
			r := wfd(t, args...)
			if tc.ok != (r.code == 0) {
				t.Fatalf("exit %d, want success %v\nstdout: %s\nstderr: %s", r.code, tc.ok, r.stdout, r.stderr)
			}
			if tc.ok && !strings.Contains(r.stdout, "echo") {
				t.Fatalf("workflows printed %q", r.stdout)
			}
		})
	}
	t.Run("from the environment", func(t *testing.T) {
		t.Setenv("WFD_TLS_CA", f.ca)
		t.Setenv("WFD_TLS_CERT", f.clientCert)
		t.Setenv("WFD_TLS_KEY", f.clientKey)
		t.Setenv("WFD_TOKEN", "s3cret")
		if out := ok(t, "workflows", "--addr", addr); !strings.Contains(out, "echo") {
			t.Fatalf("workflows printed %q", out)
		}
	})
}

func TestClientFlagMistakes(t *testing.T) {
	f := writePKI(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"cert without key", []string{"--tls-cert", f.clientCert}, "--tls-cert and --tls-key"},
		{"CA file that is no certificate", []string{"--tls-ca", f.clientKey}, "no PEM certificate"},
		{"token in plaintext off loopback", []string{"--addr", "192.0.2.1:7233", "--token", "s3cret"}, "TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := wfd(t, append([]string{"workflows"}, tc.args...)...)
			if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want a failure saying %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

func TestServeTLSFlagMistakes(t *testing.T) {
	f := writePKI(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"cert without key", []string{"--tls-cert", f.serverCert}, "--tls-cert and --tls-key"},
		{"client CA without cert", []string{"--tls-client-ca", f.ca}, "--tls-client-ca needs"},
		{"key that does not match", []string{"--tls-cert", f.serverCert, "--tls-key", f.clientKey}, "private key does not match"},
		{"unknown client auth", []string{"--tls-cert", f.serverCert, "--tls-key", f.serverKey, "--tls-client-ca", f.ca, "--tls-client-auth", "maybe"}, "not one of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := wfd(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)...)
			if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want a failure saying %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

func TestServeWarnsOfPlaintextOffLoopback(t *testing.T) {
	const warning = "serving plaintext on a non-loopback address"
	_, logs := serveLogged(t, "--addr", "0.0.0.0:0")
	if !strings.Contains(logs.String(), warning) {
		t.Errorf("serving on 0.0.0.0 logged no warning:\n%s", logs)
	}
	_, logs = serveLogged(t)
	if strings.Contains(logs.String(), warning) {
		t.Errorf("serving on 127.0.0.1 warned of plaintext:\n%s", logs)
	}
	f := writePKI(t)
	_, logs = serveLogged(t, "--addr", "0.0.0.0:0", "--tls-cert", f.serverCert, "--tls-key", f.serverKey)
	if strings.Contains(logs.String(), warning) {
		t.Errorf("serving TLS on 0.0.0.0 warned of plaintext:\n%s", logs)
	}
}

// The token reaches the server: a real server whose HTTP handler is
// wrapped to record the Authorization header of each request.
func TestTokenFlagSendsABearerToken(t *testing.T) {
	store, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Options{Store: store, Workflows: workflows.All(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		_ = store.Close()
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		auth []string
	)
	hs := srv.HTTPServer()
	inner := hs.Handler
	hs.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
		_ = hs.Shutdown(ctx)
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		_ = store.Close()
	})

	ok(t, "workflows", "--addr", l.Addr().String(), "--token", "s3cret")
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 1 || auth[0] != "Bearer s3cret" {
		t.Fatalf("authorization headers %q, want one Bearer s3cret", auth)
	}
}

// The server's TLS settings come from WFD_SERVE_TLS_*, not from the client
// commands' WFD_TLS_CERT and WFD_TLS_KEY (a client certificate).
func TestServeTLSFromTheEnvironment(t *testing.T) {
	f := writePKI(t)
	t.Setenv("WFD_SERVE_TLS_CERT", f.serverCert)
	t.Setenv("WFD_SERVE_TLS_KEY", f.serverKey)
	t.Setenv("WFD_SERVE_TLS_CLIENT_CA", f.ca)
	t.Setenv("WFD_TLS_CERT", f.clientCert)
	t.Setenv("WFD_TLS_KEY", f.clientKey)
	t.Setenv("WFD_TLS_CA", f.ca)
	addr, logs := serveLogged(t)
	if !strings.Contains(logs.String(), `"tls":true`) {
		t.Fatalf("serve did not log tls=true:\n%s", logs)
	}
	if out := ok(t, "workflows", "--addr", addr); !strings.Contains(out, "echo") {
		t.Fatalf("workflows printed %q", out)
	}
}

// TestClientCertificateIdentity: with --tls-client-ca and --auth-tokens, a
// client certificate is the caller's identity, with the roles the token
// file gives its subject: alice (reader) may list workflows and is refused
// RunWorkflow; a certificate subject the file does not name has no roles.
func TestClientCertificateIdentity(t *testing.T) {
	f := writePKI(t)
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("certificates:\n  - subject: alice\n    roles: [reader]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := serve(t, "--tls-cert", f.serverCert, "--tls-key", f.serverKey, "--tls-client-ca", f.ca, "--auth-tokens", tokens)
	alice := []string{"--addr", addr, "--timeout", "30s", "--tls-ca", f.ca, "--tls-cert", f.clientCert, "--tls-key", f.clientKey}
	if out := ok(t, append([]string{"workflows"}, alice...)...); !strings.Contains(out, "echo") {
		t.Fatalf("workflows as alice printed %q", out)
	}
	r := wfd(t, append([]string{"run", "echo"}, alice...)...)
	if r.code == 0 || !strings.Contains(r.stderr, "permission_denied") {
		t.Fatalf("run as alice (reader): exit %d, stderr %q; want permission_denied", r.code, r.stderr)
	}
}

// TestClientTLSMismatchesFailFast: a client whose TLS settings do not fit
// the server's fails on its first attempt, saying what is wrong and which
// flag fixes it, instead of retrying UNAVAILABLE for seconds with grpc-go's
// words ("error reading server preface: EOF"). Each command runs under a
// 5 s context with --timeout 1m, so a retried failure would end as
// deadline_exceeded, not with the message.
func TestClientTLSMismatchesFailFast(t *testing.T) {
	f := writePKI(t)
	other, err := devcert.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := other.Server("wfd.example")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	elsewhereCert, elsewhereKey, err := pair.Write(dir, "elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	otherCA, err := other.WriteCA(dir, "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	tlsAddr := serve(t, "--tls-cert", f.serverCert, "--tls-key", f.serverKey)
	mtlsAddr := serve(t, "--tls-cert", f.serverCert, "--tls-key", f.serverKey, "--tls-client-ca", f.ca)
	plainAddr := serve(t)
	elsewhereAddr := serve(t, "--tls-cert", elsewhereCert, "--tls-key", elsewhereKey)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"TLS to a server whose CA is unknown", []string{"--addr", tlsAddr, "--tls"},
			[]string{"connect to " + tlsAddr + ": TLS: server certificate not trusted (unknown authority", "pass --tls-ca"}},
		{"TLS with another CA", []string{"--addr", tlsAddr, "--tls-ca", otherCA},
			[]string{"TLS: server certificate not trusted (unknown authority", "pass --tls-ca"}},
		{"TLS to a certificate for another name", []string{"--addr", elsewhereAddr, "--tls-ca", otherCA},
			[]string{"TLS: server certificate not valid for 127.0.0.1", "wfd.example"}},
		{"plaintext to a TLS port", []string{"--addr", tlsAddr},
			[]string{"connect to " + tlsAddr + ": the server speaks TLS; use --tls"}},
		{"plaintext to a mutual TLS port", []string{"--addr", mtlsAddr},
			[]string{"the server speaks TLS; use --tls"}},
		{"TLS to a plaintext port", []string{"--addr", plainAddr, "--tls-ca", f.ca},
			[]string{"the server does not speak TLS", "without --tls"}},
		{"no client certificate for mutual TLS", []string{"--addr", mtlsAddr, "--tls-ca", f.ca},
			[]string{"TLS: the server requires a client certificate", "--tls-cert and --tls-key"}},
		{"a client certificate the server does not trust", []string{"--addr", mtlsAddr, "--tls-ca", f.ca, "--tls-cert", f.strangerCert, "--tls-key", f.strangerKey},
			[]string{"TLS: the server requires a client certificate signed by a CA it trusts", "--tls-cert"}},
	} {
		for _, cmd := range [][]string{{"workflows"}, {"stream", "nobody"}} {
			t.Run(tc.name+"/"+cmd[0], func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				var stdout, stderr strings.Builder
				args := append(append(append([]string{}, cmd...), "--timeout", "1m"), tc.args...)
				code := cli.Main(ctx, args, &stdout, &stderr)
				if code != 1 {
					t.Errorf("exit %d, want 1", code)
				}
				for _, w := range tc.want {
					if !strings.Contains(stderr.String(), w) {
						t.Errorf("stderr %q, want it to say %q", stderr.String(), w)
					}
				}
				if ctx.Err() != nil || strings.Contains(stderr.String(), "deadline_exceeded") {
					t.Errorf("the command ran into its 5 s context (stderr %q): it retried what cannot succeed", stderr.String())
				}
			})
		}
	}
	// What works still does.
	if out := ok(t, "workflows", "--addr", tlsAddr, "--tls-ca", f.ca); !strings.Contains(out, "echo") {
		t.Fatalf("workflows printed %q", out)
	}
}
