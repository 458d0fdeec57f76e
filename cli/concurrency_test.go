package cli_test

import (
	"strings"
	"testing"
)

// TestConcurrencyCLI: deploy runs one handler per environment; the
// second is queued (get names its key and place, handlers --status queued
// lists it), and runs once the first is done; workflows shows the limit.
func TestConcurrencyCLI(t *testing.T) {
	addr := serve(t)
	ok(t, "--addr", addr, "run", "deploy", "--id", "d-1", "--input", `{"environment": "prod", "version": "1"}`)
	ok(t, "--addr", addr, "run", "deploy", "--id", "d-2", "--input", `{"environment": "prod", "version": "2"}`)
	ok(t, "--addr", addr, "run", "deploy", "--id", "s-1", "--input", `{"environment": "staging", "version": "2"}`)
	if out := ok(t, "--addr", addr, "get", "d-2"); !strings.Contains(out, "queued") || !strings.Contains(out, `key "prod", queued at 1`) {
		t.Fatalf("get d-2 of a busy environment:\n%s", out)
	}
	out := ok(t, "--addr", addr, "handlers", "--workflow", "deploy", "--status", "queued")
	if !strings.Contains(out, "d-2") || strings.Contains(out, "d-1") || strings.Contains(out, "s-1") {
		t.Fatalf("handlers --status queued:\n%s", out)
	}
	if out := ok(t, "--addr", addr, "workflows", "deploy"); !strings.Contains(out, "at most 1 running per input environment; queues the rest") {
		t.Fatalf("workflows deploy shows no limit:\n%s", out)
	}
	ok(t, "--addr", addr, "send", "d-1", "done", `{"ok": true}`)
	ok(t, "--addr", addr, "send", "d-2", "done", `{"ok": true}`, "--wait", "1m")
	if out := ok(t, "--addr", addr, "get", "d-2"); !strings.Contains(out, "completed") {
		t.Fatalf("d-2 after d-1 ended and its own done:\n%s", out)
	}
	r := wfd(t, "--addr", addr, "run", "deploy", "--input", `{"version": "3"}`)
	if r.code == 0 || !strings.Contains(r.stderr, "invalid_argument") {
		t.Fatalf("deploy without an environment: exit %d, stderr %q", r.code, r.stderr)
	}
}
