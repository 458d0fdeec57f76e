package server_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/clients/go/worker"
)

// parked is how many handlers the tests here park.
const parked = 1000

// forEach calls f for 0..parked-1 from a few goroutines and waits for them.
func forEach(f func(i int)) {
	const n = parked
	const width = 16
	var wg sync.WaitGroup
	next := make(chan int)
	for range width {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func getStats(t *testing.T, c wfdv1connect.WorkflowServiceClient) *wfdv1.GetStatsResponse {
	t.Helper()
	s, err := c.GetStats(ctxT(t), &wfdv1.GetStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWorkerManyParkedHandlersReleasedAndWoken: 1,000 handlers of a
// worker-defined workflow park on their waits, are released from memory
// (the worker holds no run for any of them meanwhile), and each is woken
// by its event and completes with its own decision.
func TestWorkerManyParkedHandlersReleasedAndWoken(t *testing.T) {
	const n = parked
	start := time.Now()
	ts := startServer(t, serverConfig{})
	c := ts.client()
	startWorker(t, ts, "parked", worker.Workflow{Definition: approvalDef("approval-parked"), Run: map[string]worker.StepFunc{"decide": decide}})
	workersServing(t, ts, "approval-parked", 1)

	ids := make([]string, n)
	forEach(func(i int) {
		res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-parked", Input: st(t, map[string]any{"i": i})})
		if err != nil {
			t.Error(err)
			return
		}
		ids[i] = res.GetHandler().GetHandlerId()
	})
	if t.Failed() {
		t.FailNow()
	}
	testwait.Until(t, func() error {
		if s := getStats(t, c); s.GetHandlersIdleInMemory() != int64(n) {
			return fmt.Errorf("%d handlers idle in memory, want %d", s.GetHandlersIdleInMemory(), n)
		}
		return nil
	})
	// Parked handlers are the server's alone: no run is in progress on
	// the worker.
	wc := wfdv1connect.NewWorkerServiceClient(ts.http, "http://"+ts.addr)
	ws, err := wc.ListWorkers(ctxT(t), &wfdv1.ListWorkersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.GetWorkers()) != 1 || len(ws.GetWorkers()[0].GetRuns()) != 0 {
		t.Fatalf("ListWorkers with every handler parked: %v, want one worker with no run in progress", ws.GetWorkers())
	}

	forEach(func(i int) {
		if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: ids[i]}); err != nil {
			t.Error(err)
		}
	})
	s := getStats(t, c)
	if s.GetHandlersReleased() != int64(n) || s.GetHandlersIdleInMemory() != 0 {
		t.Fatalf("after releasing all: %d released, %d idle in memory; want %d, 0", s.GetHandlersReleased(), s.GetHandlersIdleInMemory(), n)
	}
	rehydrated := s.GetRehydrationsTotal()

	forEach(func(i int) {
		if _, err := c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: ids[i],
			Event: &wfdv1.Event{Type: "approval", Data: st(t, map[string]any{"approved": i%2 == 0})}}); err != nil {
			t.Error(err)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	testwait.Until(t, func() error {
		if got := getStats(t, c).GetHandlersByStatus()["completed"]; got != int64(n) {
			return fmt.Errorf("%d handlers completed, want %d", got, n)
		}
		return nil
	})
	forEach(func(i int) {
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: ids[i]})
		if err != nil {
			t.Error(err)
			return
		}
		if h := res.GetHandler(); h.GetResult().GetFields()["approved"].GetBoolValue() != (i%2 == 0) {
			t.Errorf("handler %d completed with %v, want approved: %v", i, h.GetResult(), i%2 == 0)
		}
	})
	s = getStats(t, c)
	if got := s.GetRehydrationsTotal() - rehydrated; got < int64(n) {
		t.Fatalf("%d rehydrations after the events, want at least %d", got, n)
	}
	// Each handler: its first run (parked) and its re-run.
	if s.GetDispatchesTotal() != int64(2*n) || s.GetRedispatchesTotal() != 0 {
		t.Fatalf("%d dispatches (%d redispatched), want %d (0)", s.GetDispatchesTotal(), s.GetRedispatchesTotal(), 2*n)
	}
	t.Logf("%d handlers parked, released and woken in %v", n, time.Since(start).Round(time.Millisecond))
}
