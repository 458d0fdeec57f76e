package cli_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/cli"
	"github.com/wfd-dev/wfd/internal/testlog"
)

// TestApprovalTour is the README's human-in-the-loop tour: run approval,
// the stream shows the question, the handler idles and is released, the
// answer wakes it and the stream ends with the result.
func TestApprovalTour(t *testing.T) {
	addr := serve(t)
	out := ok(t, "run", "approval", "--input", `{"amount": 42}`, "--addr", addr)
	id := field(out)
	if !strings.Contains(out, "approval") {
		t.Fatalf("run printed %q", out)
	}

	// Follow the handler in the background, as a person would in a terminal.
	streamOut := &testlog.Buffer{}
	streamErr := &testlog.Buffer{}
	done := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	go func() {
		done <- cli.Main(ctx, []string{"stream", id, "--internal", "--addr", addr}, streamOut, streamErr)
	}()
	eventually(t, "the stream shows the question", func() bool {
		return strings.Contains(streamOut.String(), "idle: waits for approval (step decide)")
	})

	get := ok(t, "get", id, "--addr", addr)
	matchLines(t, get, []string{`^handler: +` + id + `$`, `^status: +running$`, `^residency: +active$`, `^idle: +waits for approval \(step decide\)$`})
	if out := ok(t, "handlers", "--idle", "--addr", addr); !strings.Contains(out, id) {
		t.Errorf("handlers --idle does not list %s:\n%s", id, out)
	}
	if out := ok(t, "release", id, "--addr", addr); !strings.Contains(out, id+"  approval  released  waits for approval (step decide)") {
		t.Errorf("release printed %q", out)
	}
	if out := ok(t, "handlers", "--residency", "released", "--addr", addr); !strings.Contains(out, id) {
		t.Errorf("handlers --residency released does not list %s:\n%s", id, out)
	}
	ok(t, "send", id, "approval", `{"approved": true, "comment": "fine"}`, "--addr", addr)

	if code := <-done; code != 0 {
		t.Fatalf("stream exited with %d: %s", code, streamErr)
	}
	lines := strings.Split(strings.TrimSpace(streamOut.String()), "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, fmt.Sprintf("#%d ", i+1)) {
			t.Fatalf("line %d is %q; all:\n%s", i, l, streamOut)
		}
	}
	want := []string{
		`^#1 step decide started \(input start\)$`,
		`^#2 event question \{"answer":.*"question":"approve this request\?","request":\{"amount":42\}\}$`,
		`^#3 step decide ended \(waiting\)$`,
		`^#4 idle: waits for approval \(step decide\)$`,
		`^#5 released$`,
	}
	for i, re := range want {
		if i >= len(lines) || !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Fatalf("line %d does not match %s; all:\n%s", i, re, streamOut)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, ` completed {"approved":true,"comment":"fine","request":{"amount":42}}`) {
		t.Errorf("last line %q", last)
	}
	matchLines(t, ok(t, "get", id, "--addr", addr), []string{`^status: +completed$`, `^result: +\{"approved":true,`})
}

func TestRunFollow(t *testing.T) {
	addr := serve(t)
	tests := []struct {
		name string
		args []string
		code int
		want []string // lines, as regular expressions, in order
	}{
		{"echo", []string{"run", "echo", "--input", `{"x": 1}`, "--follow", "--internal"}, 0, []string{
			`^\S+  echo  (running|completed)`,
			`^#1 step echo started \(input start\)$`,
			`^#2 step echo ended \(emitted stop\)$`,
			`^#3 completed \{"x":1\}$`,
		}},
		{"fanin", []string{"run", "--follow", "--internal", "fanin"}, 0, []string{
			`^\S+  fanin  (running|completed)`,
			`^#1 step split started \(input start\)$`,
			`^#2 step split ended \(emitted item, item, item\)$`,
			`completed \{"results":\[0,1,4\]\}$`,
		}},
		{"fixed id", []string{"run", "echo", "--id", "job-1", "--input", `{"n": 1}`, "--follow"}, 0, []string{`^job-1  echo  `, `^#3 completed \{"n":1\}$`}},
		// The same id again returns the first handler, input and all.
		{"fixed id again", []string{"run", "echo", "--id", "job-1", "--input", `{"n": 2}`, "--follow"}, 0, []string{`^job-1  echo  completed  \{"n":1\}$`, `^#3 completed \{"n":1\}$`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := wfd(t, append(tt.args, "--addr", addr)...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", r.code, tt.code, r.stderr)
			}
			matchLines(t, r.stdout, tt.want)
		})
	}
}

func TestCancel(t *testing.T) {
	addr := serve(t)
	id := field(ok(t, "run", "approval", "--addr", addr))
	if out := ok(t, "cancel", id, "--addr", addr); !strings.Contains(out, id+"  approval  cancelled") {
		t.Errorf("cancel printed %q", out)
	}
	// Following a cancelled handler prints its end and exits 1.
	r := wfd(t, "stream", id, "--after", "2", "--internal", "--addr", addr)
	if r.code != 1 || r.stderr != "" {
		t.Fatalf("stream: exit %d, stderr %q", r.code, r.stderr)
	}
	matchLines(t, r.stdout, []string{`^#3 `, `cancelled`})
	if strings.HasPrefix(r.stdout, "#1 ") {
		t.Errorf("--after 2 printed record 1:\n%s", r.stdout)
	}
}

func TestHandlersFilters(t *testing.T) {
	addr := serve(t)
	echo := field(ok(t, "run", "echo", "--follow", "--addr", addr))
	idle := field(ok(t, "run", "approval", "--addr", addr))
	eventually(t, "approval is idle", func() bool {
		return strings.Contains(ok(t, "get", idle, "--addr", addr), "idle since")
	})
	tests := []struct {
		args      []string
		want, not []string
	}{
		{nil, []string{"ID  ", echo, idle}, nil},
		{[]string{"--workflow", "echo"}, []string{echo}, []string{idle}},
		{[]string{"--status", "completed,failed"}, []string{echo}, []string{idle}},
		{[]string{"--status", "running"}, []string{idle}, []string{echo}},
		{[]string{"--idle"}, []string{idle}, []string{echo}},
		{[]string{"--idle-for", "1h"}, []string{"no handlers"}, []string{idle, echo}},
		{[]string{"--residency", "active", "--workflow", "approval"}, []string{idle}, []string{echo}},
		{[]string{"--limit", "1"}, []string{idle}, []string{echo}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := ok(t, append([]string{"handlers", "--addr", addr}, tt.args...)...)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("output has %q:\n%s", n, out)
				}
			}
		})
	}
}

// matchLines fails unless the lines of out match the expressions, in order
// (other lines may come between).
func matchLines(t *testing.T, out string, want []string) {
	t.Helper()
	i := 0
	for line := range strings.Lines(out) {
		if i < len(want) && regexp.MustCompile(want[i]).MatchString(strings.TrimRight(line, "\n")) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("no line matches %s after the first %d; output:\n%s", want[i], i, out)
	}
}

// TestInterrupt: a stream ends quietly with status 130 when its context
// (SIGINT in the binary) is cancelled.
func TestInterrupt(t *testing.T) {
	addr := serve(t)
	id := field(ok(t, "run", "approval", "--addr", addr))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &testlog.Buffer{}, &testlog.Buffer{}
	done := make(chan int, 1)
	go func() { done <- cli.Main(ctx, []string{"stream", id, "--internal", "--addr", addr}, stdout, stderr) }()
	eventually(t, "the stream shows the idle record", func() bool {
		return strings.Contains(stdout.String(), "idle: ")
	})
	cancel()
	if code := <-done; code != 130 || stderr.String() != "" {
		t.Fatalf("exit %d, stderr %q; want 130 and nothing", code, stderr)
	}
}
