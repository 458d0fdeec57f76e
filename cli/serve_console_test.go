package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// consoleAddr returns the console's address from serve's JSON logs ("" if
// it logged none).
func consoleAddr(logs string) string {
	for line := range strings.Lines(logs) {
		var entry struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "console" {
			return entry.Addr
		}
	}
	return ""
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeConsole: "wfd serve --console-addr" serves the embedded console
// at /ui/ (/ redirects there) and the API beside it.
func TestServeConsole(t *testing.T) {
	_, logs := serveLogged(t, "--console-addr", "127.0.0.1:0")
	addr := consoleAddr(logs.String())
	if addr == "" {
		t.Fatalf("serve logged no console address:\n%s", logs)
	}
	if code, body := httpGet(t, "http://"+addr+"/"); code != http.StatusOK || !strings.Contains(body, `<div id="root">`) {
		t.Errorf("GET / (redirected to /ui/): %d %.200q", code, body)
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+addr+"/wfd.v1.WorkflowService/ListWorkflows", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://"+addr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "expense") {
		t.Errorf("ListWorkflows on the console's port: %d %.200q", resp.StatusCode, b)
	}
}

// TestServeConsoleAddrInUse: an explicit console address in use stops
// serve; the default one in use (another wfd, a test server) only turns
// the console off, with a warning; "" turns it off.
func TestServeConsoleAddrInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	if r := wfd(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--console-addr", busy.Addr().String()); r.code == 0 ||
		!strings.Contains(r.stderr, "console-addr") {
		t.Errorf("serve with its console address in use: exit %d, stderr %q", r.code, r.stderr)
	}

	// Hold the default address, unless something already does.
	if l, err := net.Listen("tcp", "127.0.0.1:7234"); err == nil {
		defer func() { _ = l.Close() }()
	}
	_, logs := serveLogged(t)
	eventually(t, "serve warns that the console is off", func() bool { return strings.Contains(logs.String(), "console off") })
	if a := consoleAddr(logs.String()); a != "" {
		t.Errorf("serve logged a console at %s with the default address in use", a)
	}

	_, logs = serveLogged(t, "--console-addr", "")
	if a := consoleAddr(logs.String()); a != "" || strings.Contains(logs.String(), "console off") {
		t.Errorf(`--console-addr "": logged a console (%q) or a warning:\n%s`, a, logs)
	}
}
