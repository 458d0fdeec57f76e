package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/cli"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestMain makes the test binary the wfd command when it runs as "wfd"
// (a link to it), for the shell completion scripts that call wfd, and
// otherwise runs the tests with a PostgreSQL server (pgtest).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "wfd" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(pgtest.Main(m))
}

// wfdBinary returns a path to a wfd command: a link to the test binary.
func wfdBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wfd")
	if err := os.Symlink(exe, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// serve runs "wfd serve" on a loopback port and a fresh data directory
// until the test ends, and returns the address it logged.
func serve(t *testing.T, extra ...string) string {
	t.Helper()
	addr, _ := serveLogged(t, extra...)
	return addr
}

// serveLogged is serve that also returns the server's logs.
func serveLogged(t *testing.T, extra ...string) (string, *testlog.Buffer) {
	t.Helper()
	addr, _, logs := serveStoppable(t, extra...)
	return addr, logs
}

// serveStoppable runs "wfd serve" with a fresh data directory until stop
// is called (or the test ends), and returns the address it logged. Stopped,
// it must exit 0 having logged its stop.
func serveStoppable(t *testing.T, extra ...string) (addr string, stop func(), logs *testlog.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &testlog.Buffer{}
	done := make(chan int, 1)
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--log-format", "json", "--grace", "2s"}, extra...)
	go func() { done <- cli.Main(ctx, args, io.Discard, logs) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited with %d; logs:\n%s", code, logs)
		}
		if !strings.Contains(logs.String(), `"msg":"stopped"`) {
			t.Errorf("serve did not log its stop; logs:\n%s", logs)
		}
	}
	t.Cleanup(stop)
	eventually(t, "serve logs listening", func() bool {
		for line := range strings.Lines(logs.String()) {
			var entry struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "listening" {
				addr = entry.Addr
				return true
			}
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d; logs:\n%s", code, logs)
		default:
		}
		return false
	})
	return addr, stop, logs
}

// result is what one run of the command line printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// wfd runs the command line in-process.
func wfd(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, args, &stdout, &stderr)
	return result{stdout.String(), stderr.String(), code}
}

// ok runs the command line and fails the test unless it succeeds.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := wfd(t, args...)
	if r.code != 0 {
		t.Fatalf("wfd %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// eventually polls cond until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.For(t, what, cond)
}

// field returns the first whitespace-separated field of s.
func field(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
