package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// The environment of a helper worker process: the server's address and
// the file its step creates once it runs.
const (
	helperAddrEnv   = "WFD_TEST_HELPER_WORKER_ADDR"
	helperMarkerEnv = "WFD_TEST_HELPER_WORKER_MARKER"
)

// killedDef is the workflow the helper process and the replacement worker
// both serve: one step that completes with the name of who ran it.
func killedDef() engine.Workflow {
	return engine.Workflow{Name: "killed-remote",
		Steps: []engine.Step{{Name: "work", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}}}
}

// TestHelperWorkerProcess is not a test: run by TestWorkerProcessKilledMidStep
// as a process of its own (the test binary re-executed), it serves
// killedDef with a step that creates the marker file and never returns.
func TestHelperWorkerProcess(t *testing.T) {
	addr := os.Getenv(helperAddrEnv)
	if addr == "" {
		return
	}
	marker := os.Getenv(helperMarkerEnv)
	c, err := client.Dial(addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	stuck := func(ctx context.Context, sc worker.Context, _ engine.Event) error {
		sc.Write("doomed", nil)
		if err := os.WriteFile(marker, nil, 0o600); err != nil {
			return err
		}
		<-ctx.Done() // until the process is killed
		return ctx.Err()
	}
	w, err := worker.New(c.Conn(), worker.Options{Name: "doomed"}, worker.Workflow{Definition: killedDef(), Run: map[string]worker.StepFunc{"work": stuck}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	err = w.Run(context.Background())
	fmt.Fprintln(os.Stderr, "worker ended:", err)
	os.Exit(3)
}

// TestWorkerProcessKilledMidStep: a worker process SIGKILLed in the middle
// of a step (no goodbye: its connection just breaks), or stopped with
// SIGSTOP (its connection stays open but answers nothing: the server's
// HTTP/2 PING goes unanswered and it closes the connection), has its run
// dispatched again to a second worker, which finishes it. The handler
// completes once, with the second worker's result; the lost run is not a
// failed attempt and its write is not on the stream.
func TestWorkerProcessKilledMidStep(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
		t.Run(sig.String(), func(t *testing.T) { testWorkerProcessLost(t, sig) })
	}
}

func testWorkerProcessLost(t *testing.T, sig syscall.Signal) {
	ts := startServer(t, serverConfig{pingTimeout: 300 * time.Millisecond})
	c := ts.client()
	marker := filepath.Join(t.TempDir(), "started")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWorkerProcess$")
	cmd.Env = append(os.Environ(), helperAddrEnv+"="+ts.addr, helperMarkerEnv+"="+marker)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // also ends a stopped process
		t.Logf("worker process ended: %v", <-exited)
	})
	workersServing(t, ts, "killed-remote", 1)
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "killed-remote", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetHandler().GetHandlerId()
	testwait.For(t, "the helper process runs the step", func() bool {
		_, err := os.Stat(marker)
		return err == nil
	})
	wc := wfdv1connect.NewWorkerServiceClient(ts.http, "http://"+ts.addr)
	ws, err := wc.ListWorkers(ctxT(t), &wfdv1.ListWorkersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.GetWorkers()) != 1 || len(ws.GetWorkers()[0].GetRuns()) != 1 || ws.GetWorkers()[0].GetRuns()[0].GetHandlerId() != id {
		t.Fatalf("ListWorkers: %v, want the helper with the handler's run in progress", ws.GetWorkers())
	}

	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if sig == syscall.SIGKILL {
		var exit *exec.ExitError
		if err := <-exited; !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("the helper process ended with %v, want killed by SIGKILL", err)
		}
		exited <- nil // for the cleanup
	}
	finish := func(_ context.Context, sc worker.Context, _ engine.Event) error {
		return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"by": structpb.NewStringValue("second")}})
	}
	startWorker(t, ts, "second", worker.Workflow{Definition: killedDef(), Run: map[string]worker.StepFunc{"work": finish}})

	recs := collect(t, c, id, 0)
	finished := 0
	for _, r := range recs {
		if f := r.GetHandlerFinished(); f != nil {
			finished++
			if f.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || f.GetResult().GetFields()["by"].GetStringValue() != "second" {
				t.Fatalf("handler finished %v, want completed by the second worker", f)
			}
		}
		if s := r.GetStepStateChanged(); s != nil && (s.GetError() != "" || s.GetAttempt() != 1) {
			t.Fatalf("step record %v: the killed run must not count as a failed attempt (one attempt, no error); records %v", s, recs)
		}
		if r.GetEventWritten().GetType() == "doomed" {
			t.Fatalf("the killed run's write is on the stream: %v", recs)
		}
	}
	if finished != 1 {
		t.Fatalf("%d HandlerFinished records, want 1: %v", finished, recs)
	}
	stats, err := c.GetStats(ctxT(t), &wfdv1.GetStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.GetRedispatchesTotal() != 1 || stats.GetDispatchesTotal() != 2 {
		t.Fatalf("stats: %d redispatches, %d dispatches; want 1, 2", stats.GetRedispatchesTotal(), stats.GetDispatchesTotal())
	}
}
