package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// expenseVersion is the expense workflow as a worker defines it: "review"
// waits for "approve" and finishes with the version that ran it. v2 adds
// a step ("audit", on an "audit" event from outside) and an optional
// input field ("note", a string).
func expenseVersion(version string, ran *atomic.Int32) worker.Workflow {
	review := func(_ context.Context, sc worker.Context, _ engine.Event) error {
		ran.Add(1)
		if _, err := sc.WaitFor("approve", engine.WaitOptions{}); err != nil {
			return err
		}
		return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"version": structpb.NewStringValue(version)}})
	}
	def := engine.Workflow{Name: "expense-report", Version: version, Events: []engine.EventType{{Type: "approve"}},
		InputSchema: []byte(`{"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}`),
		Steps:       []engine.Step{{Name: "review", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}}}
	run := map[string]worker.StepFunc{"review": review}
	if version == "v2" {
		def.InputSchema = []byte(`{"type": "object", "properties": {"amount": {"type": "number"}, "note": {"type": "string"}}, "required": ["amount"]}`)
		def.External = []string{"audit"}
		def.Steps = append(def.Steps, engine.Step{Name: "audit", Accepts: []string{"audit"}})
		run["audit"] = func(context.Context, worker.Context, engine.Event) error { return nil }
	}
	return worker.Workflow{Definition: def, Run: run}
}

// TestWorkflowVersionsOverTheWire: 1,000 parked handlers of expense@v1
// (half released) keep running v1 on a worker still serving it while a
// worker registers v2, which new handlers start on; UpgradeHandlers first
// reports which v1 handlers can move and why the others cannot, then
// moves those, which finish on v2.
func TestWorkflowVersionsOverTheWire(t *testing.T) {
	const n, oddOnes = 1000, 100
	ts := startServer(t, serverConfig{})
	c := ts.client()
	var ranV1, ranV2 atomic.Int32
	stopV1 := startWorker(t, ts, "expense-v1", expenseVersion("v1", &ranV1))
	workersServing(t, ts, "expense-report", 1)

	// The first oddOnes have a note v2's schema refuses (a number).
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	slots := make(chan struct{}, 32)
	for i := range ids {
		ids[i] = fmt.Sprintf("exp-%04d", i)
		input := st(t, map[string]any{"amount": float64(i)})
		if i < oddOnes {
			input.Fields["note"] = structpb.NewNumberValue(7)
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			_, errs[i] = c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense-report", HandlerId: ids[i], Input: input})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("starting %s: %v", ids[i], err)
		}
	}
	for i, id := range ids {
		if h := waitIdle(t, c, id); h.GetWorkflowVersion() != "v1" {
			t.Fatalf("%s runs version %q, want v1", id, h.GetWorkflowVersion())
		}
		if i%2 == 1 {
			if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: id}); err != nil {
				t.Fatal(err)
			}
		}
	}

	// v2 registers while v1 handlers run, and becomes current.
	startWorker(t, ts, "expense-v2", expenseVersion("v2", &ranV2))
	testwait.Until(t, func() error {
		w := expenseListing(t, c)
		if w.GetVersion() != "v2" {
			return fmt.Errorf("current version %q, want v2", w.GetVersion())
		}
		return nil
	})
	fresh, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense-report", Input: st(t, map[string]any{"amount": 1, "note": "new"})})
	if err != nil {
		t.Fatal(err)
	}
	if got := fresh.GetHandler().GetWorkflowVersion(); got != "v2" {
		t.Fatalf("a new handler runs %q, want v2", got)
	}
	waitIdle(t, c, fresh.GetHandler().GetHandlerId())
	if got := approve(t, c, fresh.GetHandler().GetHandlerId()); got != "v2" {
		t.Fatalf("a new handler finished on %s, want v2", got)
	}

	// v1 handlers, in memory and released, finish on the v1 worker.
	for _, id := range ids[oddOnes : oddOnes+20] {
		if got := approve(t, c, id); got != "v1" {
			t.Fatalf("%s finished on %s, want v1", id, got)
		}
	}
	left := ids[oddOnes+20:]

	// The dry run says who can move, and why the others cannot.
	cl, err := client.Dial(ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cl.Close() }()
	dry, err := cl.Upgrade(ctxT(t), "expense-report", "v1", client.UpgradeOptions{DryRun: true, PageSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	wantOutcomes(t, "dry run", dry, map[wfdv1.UpgradeOutcome]int{
		wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_CAN_MOVE: len(left),
		wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED:  oddOnes,
	}, "its input does not match the input schema of v2")
	if h := getHandlerOf(t, c, left[0]); h.GetWorkflowVersion() != "v1" {
		t.Fatalf("a dry run moved %s to %q", left[0], h.GetWorkflowVersion())
	}

	moved, err := cl.Upgrade(ctxT(t), "expense-report", "v1", client.UpgradeOptions{To: "v2", PageSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	wantOutcomes(t, "upgrade", moved, map[wfdv1.UpgradeOutcome]int{
		wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_MOVED:   len(left),
		wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED: oddOnes,
	}, "its input does not match the input schema of v2")

	// Moved handlers (once in memory, once released) take what only v2
	// takes, finish on v2, and say so in their streams.
	before := ranV1.Load()
	for _, id := range left[:20] {
		if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "audit", Data: st(t, nil)}}); err != nil {
			t.Fatalf("an event only v2 takes, to %s: %v", id, err)
		}
		waitIdle(t, c, id)
		if got := approve(t, c, id); got != "v2" {
			t.Fatalf("upgraded %s finished on %s, want v2", id, got)
		}
		upgraded := false
		for _, r := range collect(t, c, id, 0) {
			if u := r.GetHandlerUpgraded(); u != nil {
				upgraded = u.GetFromVersion() == "v1" && u.GetToVersion() == "v2"
			}
		}
		if !upgraded {
			t.Fatalf("%s's stream has no HandlerUpgraded v1 → v2", id)
		}
	}
	if ranV1.Load() != before {
		t.Fatalf("the v1 worker ran %d runs of upgraded handlers", ranV1.Load()-before)
	}
	// The refused ones still run v1, on the v1 worker.
	if got := approve(t, c, ids[0]); got != "v1" {
		t.Fatalf("a refused handler finished on %s, want v1", got)
	}

	// With no worker of v1 connected, a v1 handler's run waits, saying for
	// which version, until one is back.
	stopV1()
	if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: ids[1], Event: &wfdv1.Event{Type: "approve", Data: st(t, nil)}}); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, func() error {
		w := getHandlerOf(t, c, ids[1]).GetWaitingForWorker()
		if len(w) != 1 || w[0].GetWorkflowVersion() != "v1" {
			return fmt.Errorf("waiting for worker: %v, want one run waiting for a worker serving v1", w)
		}
		return nil
	})
	waiting := false
	for _, r := range collectUntil(t, c, ids[1], func(r *wfdv1.Record) bool { return r.GetRunWaitingForWorker().GetWaiting() }) {
		waiting = waiting || r.GetRunWaitingForWorker().GetWorkflowVersion() == "v1"
	}
	if !waiting {
		t.Fatal("the stream does not say the run waits for a worker serving v1")
	}
	startWorker(t, ts, "expense-v1-again", expenseVersion("v1", &ranV1))
	waitDone(t, c, ids[1])

	// The listing counts each version's handlers; v1 is still in use.
	w := expenseListing(t, c)
	counts := map[string][3]int64{}
	for _, v := range w.GetVersions() {
		counts[v.GetVersion()] = [3]int64{v.GetRunning() + v.GetReleased(), v.GetFinished(), int64(v.GetWorkersConnected())}
	}
	if want := [3]int64{oddOnes - 2, 20 + 2, 1}; counts["v1"] != want {
		t.Errorf("v1: unfinished, finished, workers %v, want %v", counts["v1"], want)
	}
	if want := [3]int64{int64(len(left) - 20), 20 + 1, 1}; counts["v2"] != want {
		t.Errorf("v2: unfinished, finished, workers %v, want %v", counts["v2"], want)
	}
	_, err = c.DeleteWorkflowVersion(ctxT(t), &wfdv1.DeleteWorkflowVersionRequest{Workflow: "expense-report", Version: "v1"})
	wantCode(t, err, connect.CodeFailedPrecondition, fmt.Sprintf("%d unfinished handlers run expense-report@v1", oddOnes-2))
	_, err = c.DeleteWorkflowVersion(ctxT(t), &wfdv1.DeleteWorkflowVersionRequest{Workflow: "expense-report", Version: "v2"})
	wantCode(t, err, connect.CodeFailedPrecondition, "current version")
	_, err = c.UpgradeHandlers(ctxT(t), &wfdv1.UpgradeHandlersRequest{Workflow: "expense-report", FromVersion: "v9", DryRun: true})
	wantCode(t, err, connect.CodeNotFound, "expense-report@v9")
}

// expenseListing is ListWorkflows' expense, with its versions.
func expenseListing(t *testing.T, c wfdv1connect.WorkflowServiceClient) *wfdv1.Workflow {
	t.Helper()
	res, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{Name: "expense-report"})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetWorkflows()[0]
}

// approve answers an idle expense handler and returns the version that
// finished it.
func approve(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) string {
	t.Helper()
	if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "approve", Data: st(t, nil)}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.WaitHandler(ctxT(t), &wfdv1.WaitHandlerRequest{HandlerId: id, Timeout: durationpb.New(testwait.Timeout)})
	if err != nil {
		t.Fatal(err)
	}
	h := res.GetHandler()
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("%s ended %v (%s)", id, h.GetStatus(), h.GetError())
	}
	return h.GetResult().GetFields()["version"].GetStringValue()
}

// wantOutcomes checks how many handlers had each outcome, and that every
// refusal gives reason.
func wantOutcomes(t *testing.T, what string, got []*wfdv1.HandlerUpgrade, want map[wfdv1.UpgradeOutcome]int, reason string) {
	t.Helper()
	have := map[wfdv1.UpgradeOutcome]int{}
	for _, h := range got {
		have[h.GetOutcome()]++
		if h.GetOutcome() == wfdv1.UpgradeOutcome_UPGRADE_OUTCOME_REFUSED && !strings.Contains(h.GetReason(), reason) {
			t.Errorf("%s: %s refused for %q, want %q", what, h.GetHandlerId(), h.GetReason(), reason)
		}
	}
	for o, n := range want {
		if have[o] != n {
			t.Errorf("%s: %d handlers %v, want %d (all: %v)", what, have[o], o, n, have)
		}
	}
}

// collectUntil reads handler id's stream (with internal records) until a
// record satisfies stop, and returns what it read.
func collectUntil(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, stop func(*wfdv1.Record) bool) []*wfdv1.Record {
	t.Helper()
	stream, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stream.Close() }()
	var out []*wfdv1.Record
	for stream.Receive() {
		if r := stream.Msg().GetRecord(); r != nil {
			out = append(out, r)
			if stop(r) {
				return out
			}
		}
	}
	t.Fatalf("stream of %s ended before the record looked for: %v", id, stream.Err())
	return nil
}

// waitDone waits until handler id has completed.
func waitDone(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) {
	t.Helper()
	res, err := c.WaitHandler(ctxT(t), &wfdv1.WaitHandlerRequest{HandlerId: id, Timeout: durationpb.New(testwait.Timeout)})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetHandler().GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("%s ended %v (%s)", id, res.GetHandler().GetStatus(), res.GetHandler().GetError())
	}
}

// getHandlerOf is GetHandler's handler.
func getHandlerOf(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) *wfdv1.Handler {
	t.Helper()
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetHandler()
}

// TestGoWorkerServesTwoVersions: one Go worker process serves v1 and v2
// of a workflow side by side, each run on its version's code; a version
// registered Standby stays behind the current one until promoted.
func TestGoWorkerServesTwoVersions(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	var ran atomic.Int32
	v1, v2, v3 := expenseVersion("v1", &ran), expenseVersion("v2", &ran), expenseVersion("v3", &ran)
	v3.Definition.Description = "standby"
	v3.Standby = true
	cl, err := client.Dial(ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cl.Close() }()
	w, err := worker.New(cl.Conn(), worker.Options{Name: "both", MaxRuns: 4}, v1, v2, v3)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	workersServing(t, ts, "expense-report", 1)
	if got := expenseListing(t, c).GetVersion(); got != "v2" {
		t.Fatalf("current version %q, want v2 (v1 first, v2 made current, v3 standby)", got)
	}
	for _, version := range []string{"v1", "", "v3"} {
		res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense-report", Version: version, Input: st(t, map[string]any{"amount": 1})})
		if err != nil {
			t.Fatal(err)
		}
		id := res.GetHandler().GetHandlerId()
		waitIdle(t, c, id)
		want := map[string]string{"": "v2"}[version]
		if want == "" {
			want = version
		}
		if got := approve(t, c, id); got != want {
			t.Fatalf("a handler started on %q finished on %s's code, want %s", version, got, want)
		}
	}
	if _, err := c.SetCurrentVersion(ctxT(t), &wfdv1.SetCurrentVersionRequest{Workflow: "expense-report", Version: "v3"}); err != nil {
		t.Fatal(err)
	}
	if got := expenseListing(t, c).GetVersion(); got != "v3" {
		t.Fatalf("after promotion the current version is %q, want v3", got)
	}
}
