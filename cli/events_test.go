package cli_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestDelete: delete removes a finished handler and refuses a running one.
func TestDelete(t *testing.T) {
	addr := serve(t)
	h := field(ok(t, "run", "approval", "--input", `{"amount": 1}`, "--id", "del-1", "--addr", addr))
	if r := wfd(t, "delete", h, "--addr", addr); r.code != 1 || !strings.Contains(r.stderr, "cancel it first") {
		t.Fatalf("delete of a running handler: exit %d, stderr %q", r.code, r.stderr)
	}
	ok(t, "cancel", h, "--addr", addr)
	if out := ok(t, "delete", h, "--addr", addr); out != "deleted del-1\n" {
		t.Fatalf("delete printed %q", out)
	}
	if r := wfd(t, "get", h, "--addr", addr); r.code != 1 || !strings.Contains(r.stderr, "not_found") {
		t.Fatalf("get after delete: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := wfd(t, "delete", h, "--addr", addr); r.code != 1 || !strings.Contains(r.stderr, "not_found") {
		t.Fatalf("delete twice: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestEvents lists the published-event log: by key, for a handler, since
// a time, limited, as JSON.
func TestEvents(t *testing.T) {
	addr := serve(t)
	if out := ok(t, "events", "--addr", addr); out != "no events\n" {
		t.Fatalf("events of an empty log printed %q", out)
	}
	ok(t, "publish", "k", `{"n": 1}`, "--addr", addr)
	ok(t, "publish", "other", "--addr", addr)
	ok(t, "publish", "k", `{"n": 3}`, "--handler", "h-1", "--addr", addr)
	matchLines(t, ok(t, "events", "--addr", addr), []string{
		`^SEQ +PUBLISHED +KEY +HANDLER +BY +DATA$`,
		`^3 +\S+ +k +h-1 +- +\{"n":3\}$`,
		`^2 +\S+ +other +- +- +\{\}$`,
		`^1 +\S+ +k +- +- +\{"n":1\}$`,
	})
	out := ok(t, "events", "k", "--limit", "1", "--addr", addr)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !regexp.MustCompile(`^3 `).MatchString(lines[1]) {
		t.Fatalf("events k --limit 1:\n%s", out)
	}
	if out := ok(t, "events", "--handler", "h-1", "--addr", addr); !strings.Contains(out, "h-1") || strings.Count(out, "\n") != 2 {
		t.Fatalf("events --handler h-1:\n%s", out)
	}
	if out := ok(t, "events", "--since", time.Now().Add(time.Hour).Format(time.RFC3339), "--addr", addr); out != "no events\n" {
		t.Fatalf("events since an hour from now printed %q", out)
	}
	if out := ok(t, "events", "k", "--since", "1h", "--addr", addr); strings.Count(out, "\n") != 3 {
		t.Fatalf("events k --since 1h:\n%s", out)
	}
	var ev wfdv1.PublishedEvent
	line, _, _ := strings.Cut(ok(t, "events", "k", "--json", "--addr", addr), "\n")
	if err := protojson.Unmarshal([]byte(line), &ev); err != nil || ev.GetSeq() != 3 || ev.GetHandlerId() != "h-1" {
		t.Fatalf("events --json: %v %v", &ev, err)
	}
}

// TestServeRetention: with --retention, a finished handler is deleted
// once it has been finished that long; a running one stays.
func TestServeRetention(t *testing.T) {
	addr := serve(t, "--retention", "1ms")
	running := field(ok(t, "run", "approval", "--input", `{"amount": 1}`, "--addr", addr))
	done := field(ok(t, "run", "echo", "--input", `{"x": 1}`, "--follow", "--addr", addr))
	eventually(t, "the finished handler is deleted", func() bool {
		r := wfd(t, "get", done, "--addr", addr)
		return r.code == 1 && strings.Contains(r.stderr, "not_found")
	})
	ok(t, "get", running, "--addr", addr)
}
