package cli_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/cli"
	"github.com/wfd-dev/wfd/internal/testlog"
)

// post calls a method over the Connect protocol with JSON and returns the
// HTTP status.
func post(t *testing.T, addr, method, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+addr+"/wfd.v1.WorkflowService/"+method, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestServeAuthTokens: "wfd serve --auth-tokens FILE" refuses calls
// without a token (401) and with a token whose roles do not allow the
// method (403), and serves the others; the CLI without a token fails.
func TestServeAuthTokens(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(file, []byte("tokens:\n  - {token: r-token, subject: rita, roles: [reader]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := serve(t, "--auth-tokens", file)
	for _, tc := range []struct {
		method, token string
		want          int
	}{
		{"ListWorkflows", "", http.StatusUnauthorized},
		{"ListWorkflows", "wrong", http.StatusUnauthorized},
		{"ListWorkflows", "r-token", http.StatusOK},
		{"GetStats", "r-token", http.StatusForbidden},
	} {
		if got := post(t, addr, tc.method, tc.token); got != tc.want {
			t.Errorf("%s with token %q: HTTP %d, want %d", tc.method, tc.token, got, tc.want)
		}
	}
	if r := wfd(t, "workflows", "--addr", addr); r.code == 0 || !strings.Contains(r.stderr, "unauthenticated") {
		t.Errorf("wfd workflows without a token: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestServeWithoutAuthLogs: with no authentication configured everything
// is open, and the log says so.
func TestServeWithoutAuthLogs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	logs := &testlog.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--log-format", "json"}, io.Discard, logs)
	}()
	eventually(t, "serve warns it runs without authentication", func() bool {
		return strings.Contains(logs.String(), "serving without authentication")
	})
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited with %d; logs:\n%s", code, logs)
	}
}

// TestServeRefusesBadTokenFile: a token file that does not parse stops
// serve before it listens.
func TestServeRefusesBadTokenFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(file, []byte("tokens:\n  - {token: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := wfd(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--auth-tokens", file)
	if r.code == 0 || !strings.Contains(r.stderr, "no subject") {
		t.Fatalf("serve with a bad token file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestTasksMine: "wfd tasks --mine" asks the server for the caller's
// tasks; a server without authentication cannot tell whose they are.
func TestTasksMine(t *testing.T) {
	addr := serve(t)
	r := wfd(t, "tasks", "--mine", "--addr", addr)
	if r.code == 0 || !strings.Contains(r.stderr, "authenticated") {
		t.Fatalf("wfd tasks --mine on a server without authentication: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := wfd(t, "tasks", "--mine", "--assignee", "ada", "--addr", addr); r.code == 0 || !strings.Contains(r.stderr, "exclude") {
		t.Fatalf("--mine with --assignee: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestServeHostOriginDefaults: on a loopback --addr, "wfd serve" refuses
// a Host header of another name and an Origin of another site (403), and
// serves loopback names and pages; --allowed-origins replaces the default.
func TestServeHostOriginDefaults(t *testing.T) {
	for _, tc := range []struct {
		name         string
		flags        []string
		host, origin string
		want         int
	}{
		{"loopback", nil, "", "", http.StatusOK},
		{"rebound host", nil, "evil.example", "", http.StatusForbidden},
		{"other site", nil, "", "https://evil.example", http.StatusForbidden},
		{"local page", nil, "", "http://localhost:3000", http.StatusOK},
		{"configured origin", []string{"--allowed-origins", "https://app.example"}, "", "https://app.example", http.StatusOK},
		{"default replaced", []string{"--allowed-origins", "https://app.example"}, "", "http://localhost:3000", http.StatusForbidden},
		{"any host", []string{"--allowed-hosts", "*"}, "evil.example", "", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serve(t, tc.flags...)
			req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+addr+"/wfd.v1.WorkflowService/ListWorkflows", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("HTTP %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

// TestServeDebugAddrLoopbackOnly: pprof has no authentication, so serve
// refuses a non-loopback --debug-addr unless --debug-allow-remote.
func TestServeDebugAddrLoopbackOnly(t *testing.T) {
	r := wfd(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--debug-addr", "0.0.0.0:0")
	if r.code == 0 || !strings.Contains(r.stderr, "not a loopback address") {
		t.Fatalf("serve --debug-addr 0.0.0.0:0: exit %d, stderr %q", r.code, r.stderr)
	}
	serve(t, "--debug-addr", "127.0.0.1:0")
}

// TestServeWorkerGrantFlag: --worker-grant is WORKFLOW=WHO[,WHO...] and
// needs authentication; misuse is a usage error (exit 2) saying so.
func TestServeWorkerGrantFlag(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("tokens:\n  - {token: s3cret, subject: ada, roles: [admin]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"without authentication", []string{"--worker-grant", "payroll=eve"}, "--worker-grant needs --auth-tokens"},
		{"no subject", []string{"--auth-tokens", tokens, "--worker-grant", "payroll="}, "is not WORKFLOW=WHO"},
		{"no workflow", []string{"--auth-tokens", tokens, "--worker-grant", "=eve"}, "is not WORKFLOW=WHO"},
		{"no equals sign", []string{"--auth-tokens", tokens, "--worker-grant", "payroll"}, "is not WORKFLOW=WHO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := wfd(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--console-addr", ""}, tc.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, tc.want)
			}
		})
	}
}
