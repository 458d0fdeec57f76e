package cli_test

import (
	"strings"
	"testing"
)

// TestTaskLifeCLI: claim, comment, unclaim, reassign on the command line;
// wfd task shows who holds it and the comments, and the stream the
// changes.
func TestTaskLifeCLI(t *testing.T) {
	addr := serve(t)
	h := field(ok(t, "run", "expense", "--input", `{"amount": 120, "approver": "ada"}`, "--addr", addr))
	task := taskOf(t, addr, h)
	if out := ok(t, "claim", task, "--by", "ada", "--addr", addr); !strings.Contains(out, "claimed by ada") {
		t.Fatalf("claim:\n%s", out)
	}
	r := wfd(t, "claim", task, "--by", "bob", "--addr", addr)
	if r.code == 0 || !strings.Contains(r.stderr, "claimed by ada") {
		t.Fatalf("claim by bob of ada's task: exit %d, stderr %q", r.code, r.stderr)
	}
	ok(t, "comment", task, "the receipt is attached", "--by", "ada", "--addr", addr)
	if out := ok(t, "task", task, "--addr", addr); !strings.Contains(out, "ada since") || !strings.Contains(out, ": the receipt is attached") {
		t.Fatalf("task after a claim and a comment:\n%s", out)
	}
	if out := ok(t, "tasks", "--handler", h, "--addr", addr); !strings.Contains(out, "claimed by ada") {
		t.Fatalf("tasks does not say who holds it:\n%s", out)
	}
	if out := ok(t, "tasks", "--claimed", "--addr", addr); !strings.Contains(out, task) {
		t.Fatalf("tasks --claimed:\n%s", out)
	}
	if out := ok(t, "tasks", "--unclaimed", "--addr", addr); strings.Contains(out, task) {
		t.Fatalf("tasks --unclaimed lists a claimed task:\n%s", out)
	}
	if out := ok(t, "tasks", "--overdue", "--addr", addr); strings.Contains(out, task) {
		t.Fatalf("tasks --overdue lists a task without a deadline:\n%s", out)
	}
	ok(t, "unclaim", task, "--by", "ada", "--addr", addr)
	if out := ok(t, "reassign", task, "group:finance", "--by", "ada", "--addr", addr); strings.Contains(out, "claimed") || !strings.Contains(out, "finance") {
		t.Fatalf("reassign:\n%s", out)
	}
	if out := ok(t, "tasks", "--group", "finance", "--addr", addr); !strings.Contains(out, task) {
		t.Fatalf("tasks --group finance:\n%s", out)
	}
	if r := wfd(t, "claim", task, "--addr", addr); r.code == 0 || !strings.Contains(r.stderr, "by is required") {
		t.Fatalf("claim without --by: exit %d, stderr %q", r.code, r.stderr)
	}
	ok(t, "complete", task, `{"approved": true}`, "--by", "dee", "--addr", addr)
	stream := ok(t, "stream", h, "--internal", "--addr", addr)
	for _, want := range []string{"claimed by ada", `commented by ada: "the receipt is attached"`, "unclaimed by ada", "reassigned by ada to group:finance"} {
		if !strings.Contains(stream, want) {
			t.Fatalf("stream lacks %q:\n%s", want, stream)
		}
	}
}

// TestLookBackCLI: wfd get --at shows the memos and tasks of then.
func TestLookBackCLI(t *testing.T) {
	addr := serve(t)
	h := field(ok(t, "run", "order", "--input", `{"order_id": "A7"}`, "--addr", addr))
	var seq string
	eventually(t, "the order is idle", func() bool {
		out := ok(t, "get", h, "--addr", addr)
		for _, l := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(l, "last seq:"); ok {
				seq = strings.TrimSpace(rest)
			}
		}
		return strings.Contains(out, "idle:") && seq != ""
	})
	out := ok(t, "get", h, "--at", seq, "--addr", addr)
	if !strings.Contains(out, `await_payment: reference = "ord-`) {
		t.Fatalf("get --at %s:\n%s", seq, out)
	}
}
