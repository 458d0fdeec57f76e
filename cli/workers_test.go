package cli_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// TestWorkersAgainstAStockServe: a stock `wfd serve` runs a workflow that
// only a Go worker defines, driven by the command line; `wfd workers`
// lists the worker and `wfd workflows` the workflow.
func TestWorkersAgainstAStockServe(t *testing.T) {
	addr := serve(t)
	c, err := client.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	w, err := worker.New(c.Conn(), worker.Options{Name: "go-worker", MaxRuns: 2}, approvalWorkflow("approval-go"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}()

	eventually(t, "wfd workers lists the worker", func() bool {
		out := ok(t, "workers", "--json", "--addr", addr)
		var info wfdv1.WorkerInfo
		return out != "" && protojson.Unmarshal([]byte(strings.Split(out, "\n")[0]), &info) == nil &&
			info.GetName() == "go-worker" && len(info.GetWorkflows()) == 1 && info.GetWorkflows()[0] == "approval-go"
	})
	if out := ok(t, "workflows", "--addr", addr); !regexp.MustCompile(`(?m)^approval-go .* 1 worker `).MatchString(out) ||
		!regexp.MustCompile(`(?m)^approval .* wfd `).MatchString(out) {
		t.Fatalf("wfd workflows does not list approval-go served by 1 worker, approval by wfd:\n%s", out)
	}
	h := field(ok(t, "run", "approval-go", "--addr", addr))
	eventually(t, "the handler is idle", func() bool {
		var got wfdv1.Handler
		return protojson.Unmarshal([]byte(ok(t, "get", h, "--json", "--addr", addr)), &got) == nil && got.GetIdle() != nil
	})
	ok(t, "send", h, "approval", `{"approved": true}`, "--addr", addr)
	eventually(t, "the handler completes with the decision", func() bool {
		var got wfdv1.Handler
		if protojson.Unmarshal([]byte(ok(t, "get", h, "--json", "--addr", addr)), &got) != nil {
			return false
		}
		return got.GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED &&
			got.GetResult().GetFields()["approved"].GetBoolValue()
	})
	// The run, and its re-run after the wait.
	matchLines(t, ok(t, "stats", "--addr", addr), []string{`^workers: +1$`, `^dispatches: +2 \(0 redispatched; latency p50 \S+, p99 \S+\)$`})
}

// approvalWorkflow is a workflow only a Go worker defines: its step waits
// for an "approval" event and completes with its data.
func approvalWorkflow(name string) worker.Workflow {
	def := engine.Workflow{Name: name, Events: []engine.EventType{{Type: "approval"}},
		Steps: []engine.Step{{Name: "decide", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}}}
	decide := func(_ context.Context, sc worker.Context, _ engine.Event) error {
		ev, err := sc.WaitFor("approval", engine.WaitOptions{Timeout: time.Hour})
		if err != nil {
			return err
		}
		return sc.Send(engine.StopEvent, ev.Data)
	}
	return worker.Workflow{Definition: def, Run: map[string]worker.StepFunc{"decide": decide}}
}
