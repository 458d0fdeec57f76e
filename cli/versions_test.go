package cli_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// TestWorkflowVersions drives workflow versions from the command line:
// handlers parked on v1 show in the versions table, a dry run says which
// can move to v2 (and why one cannot), the upgrade moves them (exit status
// 1 for the one refused), promote and run --version choose the version a
// handler runs, and delete-version is refused while handlers run v1.
func TestWorkflowVersions(t *testing.T) {
	addr := serve(t)
	const wf = "expense-report"
	runWorker(t, addr, "worker-v1", expenseVersion("v1"))
	eventually(t, "wfd workers lists expense-report@v1", func() bool {
		return strings.Contains(ok(t, "workers", "--addr", addr), wf+"@v1")
	})

	// Two handlers v2 can carry on, and one whose note v2's schema refuses;
	// one of them released to the store.
	ok(t, "run", wf, "--id", "exp-1", "--input", `{"amount": 1}`, "--addr", addr)
	ok(t, "run", wf, "--id", "exp-2", "--input", `{"amount": 2}`, "--addr", addr)
	ok(t, "run", wf, "--id", "exp-odd", "--input", `{"amount": 3, "note": 7}`, "--addr", addr)
	for _, id := range []string{"exp-1", "exp-2", "exp-odd"} {
		waitIdleCLI(t, addr, id)
	}
	ok(t, "release", "exp-2", "--addr", addr)
	matchLines(t, ok(t, "workflows", wf, "--addr", addr), []string{
		`^VERSION +CURRENT +SOURCE +WORKERS +RUNNING +RELEASED +FINISHED +CREATED$`,
		`^v1 +yes +worker-v1 +worker-v1 +2 +1 +0 +\S+$`,
	})
	if out := ok(t, "get", "exp-1", "--addr", addr); !regexp.MustCompile(`(?m)^version: +v1$`).MatchString(out) {
		t.Fatalf("get exp-1 does not show version v1:\n%s", out)
	}

	// v2 registers while v1's handlers run, and becomes current.
	stopV2 := runWorker(t, addr, "worker-v2", expenseVersion("v2"))
	eventually(t, "v2 is current", func() bool {
		return regexp.MustCompile(`(?m)^` + wf + ` +v2 `).MatchString(ok(t, "workflows", "--addr", addr))
	})
	matchLines(t, ok(t, "workflows", wf, "--addr", addr), []string{
		`^v1 +- +worker-v1 +worker-v1 +2 +1 +0 +\S+$`,
		`^v2 +yes +worker-v2 +worker-v2 +0 +0 +0 +\S+$`,
	})
	workers := ok(t, "workers", "--addr", addr)
	matchLines(t, workers, []string{`^\S+ +worker-v1 +` + wf + `@v1 `})
	matchLines(t, workers, []string{`^\S+ +worker-v2 +` + wf + `@v2 `})

	// The dry run reports and moves nothing.
	dry := ok(t, "workflows", "upgrade", wf, "--from", "v1", "--dry-run", "--addr", addr)
	// One line per handler, in the server's order, then the counts.
	for _, want := range []string{`^exp-1 +can move +-$`, `^exp-2 +can move +-$`, `^exp-odd +refused +its input does not match the input schema of v2`} {
		matchLines(t, dry, []string{`^HANDLER +OUTCOME +REASON$`, want, `^2 can move, 1 refused$`})
	}
	if out := ok(t, "get", "exp-1", "--addr", addr); !regexp.MustCompile(`(?m)^version: +v1$`).MatchString(out) {
		t.Fatalf("a dry run moved exp-1:\n%s", out)
	}

	// The upgrade moves two and exits 1 for the one refused.
	r := wfd(t, "workflows", "upgrade", wf, "--from", "v1", "--to", "v2", "--page-size", "2", "--addr", addr)
	if r.code != 1 || r.stderr != "wfd: not every handler moved: 1 refused, 0 busy\n" {
		t.Fatalf("upgrade: exit %d, stderr %q; want 1 and the counts", r.code, r.stderr)
	}
	for _, want := range []string{`^exp-1 +moved +-$`, `^exp-2 +moved +-$`, `^exp-odd +refused `} {
		matchLines(t, r.stdout, []string{want, `^2 moved, 1 refused$`})
	}
	if out := ok(t, "get", "exp-2", "--addr", addr); !regexp.MustCompile(`(?m)^version: +v2$`).MatchString(out) {
		t.Fatalf("get exp-2 after the upgrade does not show version v2:\n%s", out)
	}
	// Its stream says so; it finishes on v2.
	ok(t, "send", "exp-1", "approve", "--addr", addr)
	stream := ok(t, "stream", "exp-1", "--internal", "--addr", addr)
	matchLines(t, stream, []string{`^#\d+ upgraded from v1 to v2$`, `^#\d+ completed \{"version":"v2"\}$`})
	matchLines(t, ok(t, "workflows", wf, "--addr", addr), []string{
		`^v1 +- +worker-v1 +worker-v1 +1 +0 +0 +\S+$`,
		`^v2 +yes +worker-v2 +worker-v2 +(1 +0|0 +1) +1 +\S+$`, // exp-2, in memory or released
	})

	// v1 still runs a handler: it cannot be deleted.
	r = wfd(t, "workflows", "delete-version", wf, "v1", "--addr", addr)
	if r.code != 1 || !strings.HasPrefix(r.stderr, "wfd: failed_precondition: ") || !strings.Contains(r.stderr, "1 unfinished handler") {
		t.Fatalf("delete-version v1 with a handler on it: exit %d, stderr %q", r.code, r.stderr)
	}

	// Promote v1 back: run starts it, unless --version says v2.
	if out := ok(t, "workflows", "promote", wf, "v1", "--addr", addr); out != wf+": current version v1\n" {
		t.Fatalf("promote: %q", out)
	}
	matchLines(t, ok(t, "workflows", "--addr", addr), []string{`^` + wf + ` +v1 `})
	ok(t, "run", wf, "--id", "exp-new", "--input", `{"amount": 4}`, "--addr", addr)
	ok(t, "run", wf, "--id", "exp-v2", "--version", "v2", "--input", `{"amount": 5}`, "--addr", addr)
	for id, want := range map[string]string{"exp-new": "v1", "exp-v2": "v2"} {
		var h wfdv1.Handler
		if err := protojson.Unmarshal([]byte(ok(t, "get", id, "--json", "--addr", addr)), &h); err != nil {
			t.Fatal(err)
		}
		if h.GetWorkflowVersion() != want {
			t.Errorf("%s runs %q, want %s", id, h.GetWorkflowVersion(), want)
		}
	}
	ids := func(version string) []string {
		var out []string
		for line := range strings.Lines(ok(t, "handlers", "--workflow", wf, "--version", version, "--status", "running", "--addr", addr)) {
			if f := field(line); f != "ID" {
				out = append(out, f)
			}
		}
		return out
	}
	if got := strings.Join(ids("v2"), " "); got != "exp-v2 exp-2" {
		t.Errorf("running handlers of v2: %s", got)
	}
	if got := strings.Join(ids("v1"), " "); got != "exp-new exp-odd" {
		t.Errorf("running handlers of v1: %s", got)
	}

	// Once nothing runs v2 and it is not current, it can go.
	for _, id := range []string{"exp-2", "exp-v2"} {
		ok(t, "send", id, "approve", "--addr", addr)
		ok(t, "wait", id, "--addr", addr)
	}
	// Not while a worker serves it: it would register v2 again.
	if r := wfd(t, "workflows", "delete-version", wf, "v2", "--addr", addr); r.code == 0 || !strings.Contains(r.stderr, "connected workers still serve "+wf+"@v2 (worker-v2)") {
		t.Fatalf("delete-version v2 while worker-v2 serves it: exit %d, %s", r.code, r.stderr)
	}
	stopV2()
	eventually(t, "worker-v2 gone", func() bool { return !strings.Contains(ok(t, "workers", "--addr", addr), "worker-v2") })
	if out := ok(t, "workflows", "delete-version", wf, "v2", "--addr", addr); out != "deleted "+wf+"@v2\n" {
		t.Fatalf("delete-version v2: %q", out)
	}
}

// TestWorkflowVersionsUsage: the actions' arguments and flags.
func TestWorkflowVersionsUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"workflows", "upgrade", "w"}, "--from is required"},
		{[]string{"workflows", "upgrade", "w", "x", "--from", "v1"}, "workflows upgrade: wrong number of arguments"},
		{[]string{"workflows", "promote", "w"}, "Usage: wfd workflows promote WORKFLOW VERSION"},
		{[]string{"workflows", "delete-version", "w", "v", "x"}, "wrong number of arguments"},
		{[]string{"workflows", "promote", "w", "v", "--dry-run"}, "workflows promote does not take --dry-run"},
		{[]string{"workflows", "w", "--from", "v1"}, "workflows does not take --from"},
		{[]string{"workflows", "upgrade", "w", "--from", "v1", "--page-size", "1001"}, "--page-size must be between 0 and 1000"},
		{[]string{"handlers", "--version", "v1"}, "--version needs --workflow"},
	} {
		r := wfd(t, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("wfd %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
}

// expenseVersion is a version of a workflow only a Go worker defines:
// "review" waits for "approve" and completes with the version that ran
// it. v2 takes an optional string "note" in its input (v1 takes anything).
func expenseVersion(version string) worker.Workflow {
	def := engine.Workflow{Name: "expense-report", Version: version, Events: []engine.EventType{{Type: "approve"}},
		Steps: []engine.Step{{Name: "review", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}}}
	if version == "v2" {
		def.InputSchema = []byte(`{"type": "object", "properties": {"amount": {"type": "number"}, "note": {"type": "string"}}}`)
	}
	review := func(_ context.Context, sc worker.Context, _ engine.Event) error {
		if _, err := sc.WaitFor("approve", engine.WaitOptions{}); err != nil {
			return err
		}
		return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"version": structpb.NewStringValue(version)}})
	}
	return worker.Workflow{Definition: def, Run: map[string]worker.StepFunc{"review": review}}
}

// runWorker runs a Go step worker against addr until the test ends.
func runWorker(t *testing.T, addr, name string, wf worker.Workflow) (stop func()) {
	t.Helper()
	c, err := client.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(c.Conn(), worker.Options{Name: name, MaxRuns: 4}, wf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker %s: %v", name, err)
			}
			_ = c.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitIdleCLI waits until `wfd get` shows the handler idle.
func waitIdleCLI(t *testing.T, addr, id string) {
	t.Helper()
	eventually(t, id+" is idle", func() bool {
		var h wfdv1.Handler
		return protojson.Unmarshal([]byte(ok(t, "get", id, "--json", "--addr", addr)), &h) == nil && h.GetIdle() != nil
	})
}
