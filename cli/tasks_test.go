package cli_test

import (
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// taskOf waits until the handler has a task and returns its id.
func taskOf(t *testing.T, addr, handler string) string {
	t.Helper()
	var id string
	eventually(t, "the handler has a task", func() bool {
		out := ok(t, "tasks", "--handler", handler, "--json", "--addr", addr)
		if out == "" {
			return false
		}
		var task wfdv1.Task
		if err := protojson.Unmarshal([]byte(strings.Split(out, "\n")[0]), &task); err != nil {
			t.Fatalf("tasks --json printed %q: %v", out, err)
		}
		id = task.GetTaskId()
		return true
	})
	return id
}

// TestExpenseTour is the inbox tour: an expense asks ada, her inbox shows
// it, a bad answer is refused with the schema's complaint, a good one
// completes the handler.
func TestExpenseTour(t *testing.T) {
	addr := serve(t)
	h := field(ok(t, "run", "expense", "--input", `{"amount": 120, "approver": "ada"}`, "--addr", addr))
	task := taskOf(t, addr, h)
	other := field(ok(t, "run", "expense", "--addr", addr)) // for finance, newer
	finance := taskOf(t, addr, other)
	q := regexp.QuoteMeta

	inbox := ok(t, "tasks", "--assignee", "ada", "--addr", addr)
	matchLines(t, inbox, []string{`^ID +STATUS +ASSIGNEE +TITLE +HANDLER +AGE +DEADLINE$`,
		`^` + q(task) + ` +pending +ada +Approve expense +` + q(h) + ` +\d+s +-$`})
	if strings.Contains(inbox, finance) || strings.Count(inbox, "\n") != 2 {
		t.Errorf("ada's inbox:\n%s", inbox)
	}
	if out := ok(t, "tasks", "--addr", addr); !strings.Contains(out, finance) || !strings.Contains(out, "finance") {
		t.Errorf("tasks does not list finance's task:\n%s", out)
	}
	// What the handler waits for names the task.
	idle := `asks ada: "Approve expense" \(task ` + q(task) + `, step review\)`
	eventually(t, "the expense is idle", func() bool {
		return regexp.MustCompile(`(?m)^idle: +` + idle + `$`).MatchString(ok(t, "get", h, "--addr", addr))
	})
	matchLines(t, ok(t, "handlers", "--workflow", "expense", "--addr", addr), []string{`^` + q(h) + `  expense +idle +` + idle + `$`})
	matchLines(t, ok(t, "task", task, "--addr", addr), []string{
		`^task: +` + q(task) + `$`, `^status: +pending$`, `^title: +Approve expense$`, `^assignee: +ada$`, `^handler: +` + q(h) + `$`,
		`^answer fields: +approved boolean \(required\), reason string$`, `^answer schema: +\{.*"required":\["approved"\].*\}$`,
	})

	// A bad answer: exit 1, the schema's complaint, nothing changes.
	r := wfd(t, "complete", task, `{"approved": false}`, "--by", "ada", "--addr", addr)
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "wfd: invalid_argument: ") ||
		!strings.Contains(r.stderr, "does not match the task's schema") || !strings.Contains(r.stderr, "reason") {
		t.Fatalf("bad answer: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	matchLines(t, ok(t, "task", task, "--addr", addr), []string{`^status: +pending$`})

	// A good one completes the task and the handler.
	out := ok(t, "complete", task, `{"approved": false, "reason": "no receipt"}`, "--by", "ada", "--addr", addr)
	if want := task + `  completed by ada  {"approved":false,"reason":"no receipt"}` + "\n"; out != want {
		t.Errorf("complete printed %q, want %q", out, want)
	}
	matchLines(t, ok(t, "stream", h, "--addr", addr), []string{`completed \{"decision":\{"approved":false,"reason":"no receipt"\},.*"reviewed_by":"ada"\}$`})
	matchLines(t, ok(t, "task", task, "--addr", addr), []string{`^status: +completed$`, `^completed: `, `^completed by: +ada$`,
		`^answer: +\{"approved":false,"reason":"no receipt"\}$`})
	if out := ok(t, "tasks", "--assignee", "ada", "--status", "pending", "--addr", addr); out != "no tasks\n" {
		t.Errorf("ada's pending tasks after answering:\n%s", out)
	}
	matchLines(t, ok(t, "tasks", "--status", "completed,expired", "--addr", addr), []string{`^` + q(task) + ` +completed +ada `})
	matchLines(t, ok(t, "tasks", "--limit", "1", "--addr", addr), []string{`^` + q(finance) + ` `})

	// The same answer again is a retry: it succeeds. Another fails.
	if again := ok(t, "complete", task, `{"reason": "no receipt", "approved": false}`, "--by", "ada", "--addr", addr); again != out {
		t.Errorf("the same answer again printed %q", again)
	}
	r = wfd(t, "complete", task, `{"approved": true}`, "--by", "ada", "--addr", addr)
	if r.code != 1 || !strings.HasPrefix(r.stderr, "wfd: failed_precondition: ") || !strings.Contains(r.stderr, "completed") {
		t.Errorf("another answer: exit %d, stderr %q", r.code, r.stderr)
	}

	// --json prints tasks as protojson; WFD_BY stands in for --by.
	t.Setenv("WFD_BY", "bob")
	var done wfdv1.Task
	if err := protojson.Unmarshal([]byte(ok(t, "complete", finance, `{"approved": true}`, "--json", "--addr", addr)), &done); err != nil {
		t.Fatal(err)
	}
	if done.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_COMPLETED || done.GetCompletedBy() != "bob" || !done.GetAnswer().GetFields()["approved"].GetBoolValue() {
		t.Errorf("complete --json: %v", &done)
	}
	for _, args := range [][]string{{"task", task}, {"tasks", "--assignee", "ada"}} {
		var got wfdv1.Task
		if err := protojson.Unmarshal([]byte(ok(t, append(args, "--json", "--addr", addr)...)), &got); err != nil || got.GetTaskId() != task || got.GetAnswerSchema() == nil {
			t.Errorf("%s --json: %v %v", args[0], &got, err)
		}
	}
}

// TestPublishWakesOrder: a released order waits for its payment's key, and
// publishing under the key wakes and completes it.
func TestPublishWakesOrder(t *testing.T) {
	addr := serve(t)
	h := field(ok(t, "run", "order", "--input", `{"order_id": "A1"}`, "--addr", addr))
	eventually(t, "the order waits", func() bool {
		return regexp.MustCompile(`(?m)^idle: +waits for key payment:A1 \(step await_payment\)$`).MatchString(ok(t, "get", h, "--addr", addr))
	})
	if out := ok(t, "release", h, "--addr", addr); out != h+"  order  released  waits for key payment:A1 (step await_payment)\n" {
		t.Errorf("release printed %q", out)
	}
	if out := ok(t, "publish", "payment:A1", "--handler", "someone-else", "--addr", addr); !regexp.MustCompile(`^published payment:A1: seq 1, woke 0 handlers \(event \S+\)\n$`).MatchString(out) {
		t.Errorf("publish for another handler printed %q", out)
	}
	out := ok(t, "publish", "payment:A1", `{"amount": 9.5}`, "--id", "pay-1", "--addr", addr)
	if out != "published payment:A1: seq 2, woke 1 handler (event pay-1)\n" {
		t.Errorf("publish printed %q", out)
	}
	matchLines(t, ok(t, "stream", h, "--internal", "--addr", addr), []string{`^#\d+ released$`, `^#\d+ restored$`, `completed \{"order_id":"A1",.*"payment":\{"amount":9.5\},"reference":"ord-[^"]+"\}$`})
	// The same id again publishes nothing.
	if out := ok(t, "publish", "payment:A1", `{"amount": 1}`, "--id", "pay-1", "--addr", addr); out != "published payment:A1: seq 2, woke 0 handlers (event pay-1)\n" {
		t.Errorf("publish again printed %q", out)
	}
	var res wfdv1.PublishEventResponse
	if err := protojson.Unmarshal([]byte(ok(t, "publish", "other", "--json", "--addr", addr)), &res); err != nil || res.GetSeq() != 3 || res.GetEventId() == "" {
		t.Errorf("publish --json: %v %v", &res, err)
	}
}

// TestBatchChildren: get shows a batch's children and each child's parent.
func TestBatchChildren(t *testing.T) {
	addr := serve(t)
	out := ok(t, "run", "batch", "--input", `{"n": 3, "fail": [1]}`, "--follow", "--addr", addr)
	h := field(out)
	matchLines(t, out, []string{`completed \{"completed":\["` + h + `\.1\.0","` + h + `\.1\.2"\],"failed":\["` + h + `\.1\.1"\],"pending":\[\]\}$`})
	q := regexp.QuoteMeta
	matchLines(t, ok(t, "get", h, "--addr", addr), []string{`^status: +completed$`,
		`^children \(3\): +` + q(h) + `\.1\.0$`, `^ +` + q(h) + `\.1\.1$`, `^ +` + q(h) + `\.1\.2$`, `^last seq: `})
	child := ok(t, "get", h+".1.1", "--addr", addr)
	matchLines(t, child, []string{`^workflow: +job$`, `^status: +failed$`, `^parent: +` + q(h) + `$`, `^error: +.*failed as asked`})
	if strings.Contains(child, "children") {
		t.Errorf("a job has children:\n%s", child)
	}

	// A parent waiting for its children says so.
	w := field(ok(t, "run", "batch", "--input", `{"n": 2, "job_wait": "go"}`, "--addr", addr))
	eventually(t, "the batch waits", func() bool {
		return regexp.MustCompile(`(?m)^` + q(w) + ` +batch +idle +waits for 2 children \(step fan_out\)$`).MatchString(ok(t, "handlers", "--workflow", "batch", "--idle", "--addr", addr))
	})
	matchLines(t, ok(t, "get", w, "--addr", addr), []string{`^idle: +waits for 2 children \(step fan_out\)$`, `^children \(2\): +` + q(w) + `\.1\.0$`})
}

func TestStats(t *testing.T) {
	addr := serve(t)
	ok(t, "run", "echo", "--follow", "--addr", addr)
	idle := field(ok(t, "run", "approval", "--addr", addr))
	eventually(t, "approval is idle", func() bool {
		return strings.Contains(ok(t, "get", idle, "--addr", addr), "idle since")
	})
	ok(t, "release", idle, "--addr", addr)
	matchLines(t, ok(t, "stats", "--addr", addr), []string{
		`^active: +0 \(in memory, 0 idle\)$`,
		`^released: +1$`,
		`^by status: +running 1, completed 1, failed 0, cancelled 0$`,
		`^tasks pending: +0$`,
		`^releases: +1$`,
		`^rehydrations: +0$`,
		`^rehydrate latency: +-$`,
		`^streams: +\d+$`,
		`^commits: +\d+ \(\d+ changes\)$`,
	})
	ok(t, "send", idle, "approval", `{"approved": true}`, "--addr", addr)
	ok(t, "stream", idle, "--addr", addr)
	var s wfdv1.GetStatsResponse
	if err := protojson.Unmarshal([]byte(ok(t, "stats", "--json", "--addr", addr)), &s); err != nil {
		t.Fatal(err)
	}
	if s.GetRehydrationsTotal() != 1 || s.GetHandlersByStatus()["completed"] != 2 {
		t.Errorf("stats --json: %v", &s)
	}
	matchLines(t, ok(t, "stats", "--addr", addr), []string{`^rehydrations: +1$`, `^rehydrate latency: +p50 \S+, p99 \S+$`})
}

// TestCancelTaskCLI: cancel-task ends a pending task with its reason; the
// expense handler completes with the cancellation; a repeat of it
// succeeds, another one is failed_precondition; no --reason is a usage
// error.
func TestCancelTaskCLI(t *testing.T) {
	addr := serve(t)
	h := field(ok(t, "run", "expense", "--input", `{"amount": 5, "approver": "ada"}`, "--addr", addr))
	task := taskOf(t, addr, h)
	if r := wfd(t, "cancel-task", task, "--addr", addr); r.code != 2 || !strings.Contains(r.stderr, "--reason") {
		t.Fatalf("without --reason: exit %d, stderr %q", r.code, r.stderr)
	}
	out := ok(t, "cancel-task", task, "--reason", "trip called off", "--by", "bob", "--addr", addr)
	if want := task + `  cancelled by bob  "trip called off"` + "\n"; out != want {
		t.Errorf("cancel-task printed %q, want %q", out, want)
	}
	ok(t, "cancel-task", task, "--reason", "trip called off", "--by", "bob", "--addr", addr) // a retry
	matchLines(t, ok(t, "task", task, "--addr", addr), []string{`^status: +cancelled$`, `^completed by: +bob$`, `^cancel reason: +trip called off$`})
	matchLines(t, ok(t, "wait", h, "--wait", "1m", "--addr", addr), []string{`"cancelled":true`})
	matchLines(t, ok(t, "stream", h, "--internal", "--addr", addr), []string{
		`^#\d+ task "Approve expense" \(ada\) asked$`, `^#\d+ task "Approve expense" \(ada\) cancelled by bob: trip called off$`,
	})
	if r := wfd(t, "cancel-task", task, "--reason", "other", "--addr", addr); r.code != 1 || !strings.Contains(r.stderr, "failed_precondition") {
		t.Fatalf("a second cancel: exit %d, stderr %q", r.code, r.stderr)
	}
}
