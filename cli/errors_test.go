package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCallErrors(t *testing.T) {
	addr := serve(t)
	done := field(ok(t, "run", "echo", "--follow", "--addr", addr))
	idle := field(ok(t, "run", "approval", "--addr", addr))
	tests := []struct {
		name   string
		args   []string
		stderr string // prefix
	}{
		{"unknown handler", []string{"get", "nope"}, `wfd: not_found: `},
		{"send to unknown handler", []string{"send", "nope", "approval"}, `wfd: not_found: `},
		{"unknown workflow", []string{"run", "nope"}, `wfd: not_found: `},
		{"bad event type", []string{"send", idle, "bogus", `{}`}, `wfd: invalid_argument: `},
		{"bad handler id", []string{"cancel", "a b"}, `wfd: invalid_argument: `},
		{"event to a completed handler", []string{"send", done, "approval", `{"approved": true}`}, `wfd: failed_precondition: `},
		{"release a completed handler", []string{"release", done}, `wfd: failed_precondition: `},
		{"id of another workflow", []string{"run", "approval", "--id", done}, `wfd: already_exists: `},
		{"unknown task", []string{"task", "nope"}, `wfd: not_found: `},
		{"complete unknown task", []string{"complete", "nope", `{}`}, `wfd: not_found: `},
		{"publish without key", []string{"publish", ""}, `wfd: invalid_argument: `},
		{"publish with a bad id", []string{"publish", "k", "--id", "a b"}, `wfd: invalid_argument: `},
		{"tasks of a bad handler id", []string{"tasks", "--handler", "a b"}, `wfd: invalid_argument: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := wfd(t, append(tt.args, "--addr", addr)...)
			if r.code != 1 || !strings.HasPrefix(r.stderr, tt.stderr) || r.stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and stderr %q...", r.code, r.stdout, r.stderr, tt.stderr)
			}
			if strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", r.stderr)
			}
		})
	}
}

func TestNoServer(t *testing.T) {
	r := wfd(t, "workflows", "--addr", "127.0.0.1:1", "--timeout", "200ms")
	if r.code != 1 || !(strings.HasPrefix(r.stderr, "wfd: unavailable: ") || strings.HasPrefix(r.stderr, "wfd: deadline_exceeded: ")) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestServeErrors(t *testing.T) {
	addr := serve(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"address in use", []string{"--addr", addr, "--data", t.TempDir()}, 1, "wfd: listen: "},
		{"data is a file", []string{"--addr", "127.0.0.1:0", "--data", file}, 1, "wfd: open store: "},
		{"bad log level", []string{"--log-level", "loud"}, 2, "wfd: invalid value"},
		{"bad log format", []string{"--log-format", "xml"}, 2, "wfd: invalid value"},
		{"negative grace", []string{"--grace", "-1s", "--data", t.TempDir()}, 2, "wfd: --grace"},
		{"arguments", []string{"now"}, 2, "wfd: serve: wrong number of arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := wfd(t, append([]string{"serve"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q...", r.code, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}
