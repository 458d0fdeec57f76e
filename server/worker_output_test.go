package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// writerDef is a workflow of one step that writes records (their sizes
// are the test's) and completes; it is tried twice.
func writerDef(name string) engine.Workflow {
	return engine.Workflow{Name: name, Steps: []engine.Step{{Name: "write", Accepts: []string{engine.StartEvent},
		Emits: []string{engine.StopEvent}, Retry: engine.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}}}}
}

// writeRecords is writerDef's step: attempt a stores a value of set(a)
// bytes if set is given (and goes on whatever Set returns: a refused
// operation fails the run anyway), writes records(a) records of size
// bytes each, then completes with the attempt's number.
func writeRecords(size int, records, set func(attempt int) int) worker.StepFunc {
	return func(_ context.Context, sc worker.Context, _ engine.Event) error {
		if set != nil {
			_ = sc.Set("blob", structpb.NewStringValue(strings.Repeat("y", set(sc.Attempt()))))
		}
		data := &structpb.Struct{Fields: map[string]*structpb.Value{"blob": structpb.NewStringValue(strings.Repeat("x", size))}}
		for range records(sc.Attempt()) {
			sc.Write("chunk", data)
		}
		return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"attempt": structpb.NewNumberValue(float64(sc.Attempt()))}})
	}
}

// TestWorkerRunOutputLimits: what a remote step may produce is what an
// in-process one may (16 × MaxPayloadBytes sent and written per run), end
// to end: a run that writes 15 MB finishes (FinishRun carried it, where
// the server's 4 MiB message limit refused it before and the handler
// stayed running, waiting for the worker, for ever), and a run over the
// limits fails as a step error, retried by its policy, whether the engine
// refuses it (over the run's budget) or the server's message limit does
// (the worker reports the refusal as the run's error), and so does a run
// whose StepCall is too large for the server (a value to store past the
// message limit): its handler never stays waiting for the worker.
func TestWorkerRunOutputLimits(t *testing.T) {
	small := engine.Limits{MaxPayloadBytes: 64 << 10, MaxRecordBytes: 64 << 10, MaxQueuedEvents: 100}
	for _, tc := range []struct {
		name    string
		limits  engine.Limits
		maxMsg  int
		size    int
		records func(attempt int) int
		// set, if given, is the size of the value attempt a stores first.
		set func(attempt int) int
		// want is the handler's end: completed on attempt wantAttempt,
		// or failed with an error containing wantErr.
		wantAttempt int
		wantErr     string
	}{
		{name: "15MB", size: 1_000_000, records: func(int) int { return 15 }, wantAttempt: 1},
		{name: "over-budget-then-retried", limits: small, maxMsg: 256 << 10, size: 60_000,
			records: func(a int) int { return map[int]int{1: 18, 2: 1}[a] }, wantAttempt: 2},
		{name: "over-budget", limits: small, maxMsg: 256 << 10, size: 60_000,
			records: func(int) int { return 18 }, wantErr: "over the limit"},
		{name: "over-message-limit-then-retried", limits: small, maxMsg: 256 << 10, size: 60_000,
			records: func(a int) int { return map[int]int{1: 40, 2: 1}[a] }, wantAttempt: 2},
		{name: "over-message-limit", limits: small, maxMsg: 256 << 10, size: 60_000,
			records: func(int) int { return 40 }, wantErr: "larger than"},
		{name: "step-call-over-message-limit-then-retried", limits: small, maxMsg: 256 << 10, size: 10,
			records: func(int) int { return 1 }, set: func(a int) int { return map[int]int{1: 2 << 20, 2: 10}[a] }, wantAttempt: 2},
		{name: "step-call-over-message-limit", limits: small, maxMsg: 256 << 10, size: 10,
			records: func(int) int { return 1 }, set: func(int) int { return 2 << 20 }, wantErr: "larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, serverConfig{limits: tc.limits, maxBytes: tc.maxMsg})
			c := ts.client()
			name := "writer-" + tc.name
			startWorker(t, ts, "w", worker.Workflow{Definition: writerDef(name), Run: map[string]worker.StepFunc{"write": writeRecords(tc.size, tc.records, tc.set)}})
			workersServing(t, ts, name, 1)
			res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: name, Input: st(t, map[string]any{})})
			if err != nil {
				t.Fatal(err)
			}
			id := res.GetHandler().GetHandlerId()
			h := waitEnded(t, ts, id)
			switch {
			case tc.wantErr != "":
				if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_FAILED || !strings.Contains(h.GetError(), tc.wantErr) {
					t.Fatalf("handler %v: %q, want failed with an error containing %q", h.GetStatus(), h.GetError(), tc.wantErr)
				}
			case h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED:
				t.Fatalf("handler %v: %q, want completed", h.GetStatus(), h.GetError())
			case h.GetResult().GetFields()["attempt"].GetNumberValue() != float64(tc.wantAttempt):
				t.Fatalf("completed on attempt %v, want %d", h.GetResult().GetFields()["attempt"], tc.wantAttempt)
			}
		})
	}
}

// waitEnded waits until handler id is finished (a handler whose
// FinishRun was refused never is: its run stays the worker's).
func waitEnded(t *testing.T, ts *testServer, id string) *wfdv1.Handler {
	t.Helper()
	c := ts.client()
	var h *wfdv1.Handler
	testwait.Until(t, func() error {
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		if err != nil {
			t.Fatal(err)
		}
		h = res.GetHandler()
		switch h.GetStatus() {
		case wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED, wfdv1.HandlerStatus_HANDLER_STATUS_FAILED, wfdv1.HandlerStatus_HANDLER_STATUS_CANCELLED:
			return nil
		}
		return fmt.Errorf("handler %s is %v (waiting for a worker: %v)", id, h.GetStatus(), h.GetWaitingForWorker())
	})
	return h
}
