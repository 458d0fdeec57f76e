package server_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/clients/go/worker"
	"github.com/wfd-dev/wfd/engine"
)

// TestWorkerContextOperations: a worker step uses the context operations
// over the wire — Set/Get, Once, Sleep, StartChild/WaitForChildren,
// AskHuman, WaitForKey — and each behaves as in process: the step parks
// and re-runs at each wait, Once runs its function once, and the result
// carries what every operation returned.
func TestWorkerContextOperations(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	var onceRuns atomic.Int32
	step := func(_ context.Context, sc worker.Context, _ engine.Event) error {
		if err := sc.Set("k", structpb.NewNumberValue(7)); err != nil {
			return err
		}
		got, ok := sc.Get("k")
		if !ok || got.GetNumberValue() != 7 {
			return fmt.Errorf("Get: %v %v, want 7", got, ok)
		}
		memo, err := sc.Once("m", func() (*structpb.Value, error) {
			onceRuns.Add(1)
			return structpb.NewStringValue("memo"), nil
		})
		if err != nil {
			return err
		}
		if err := sc.Sleep(time.Millisecond); err != nil {
			return err
		}
		child, err := sc.StartChild("echo", &structpb.Struct{Fields: map[string]*structpb.Value{"n": structpb.NewNumberValue(1)}})
		if err != nil {
			return err
		}
		kids, err := sc.WaitForChildren([]string{child}, 0)
		if err != nil {
			return err
		}
		ans, err := sc.AskHuman(engine.Task{Title: "ok?"})
		if err != nil {
			return err
		}
		pub, err := sc.WaitForKey("go", engine.KeyOptions{})
		if err != nil {
			return err
		}
		return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{
			"memo":      memo,
			"completed": structpb.NewNumberValue(float64(len(kids.Completed))),
			"answer":    structpb.NewStringValue(ans.Data.GetFields()["say"].GetStringValue()),
			"by":        structpb.NewStringValue(ans.CompletedBy),
			"published": structpb.NewStringValue(pub.Data.GetFields()["v"].GetStringValue()),
		}})
	}
	def := engine.Workflow{Name: "ops-remote",
		Steps: []engine.Step{{Name: "ops", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent}}}}
	startWorker(t, ts, "ops", worker.Workflow{Definition: def, Run: map[string]worker.StepFunc{"ops": step}})
	workersServing(t, ts, "ops-remote", 1)
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "ops-remote", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetHandler().GetHandlerId()

	var taskID string
	testwait.Until(t, func() error {
		tasks, err := c.ListTasks(ctxT(t), &wfdv1.ListTasksRequest{HandlerId: id})
		if err != nil {
			return err
		}
		if len(tasks.GetTasks()) == 0 {
			return errors.New("no task yet")
		}
		taskID = tasks.GetTasks()[0].GetTaskId()
		return nil
	})
	if _, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: taskID, Answer: st(t, map[string]any{"say": "yes"}), CompletedBy: "ann"}); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, func() error {
		h := waitIdle(t, c, id)
		for _, w := range h.GetIdle().GetWaiters() {
			if w.GetKey() == "go" {
				return nil
			}
		}
		return fmt.Errorf("handler does not wait for key go yet: %v", h.GetIdle())
	})
	if _, err := c.PublishEvent(ctxT(t), &wfdv1.PublishEventRequest{Key: "go", HandlerId: id, Data: st(t, map[string]any{"v": "pub"})}); err != nil {
		t.Fatal(err)
	}
	var fin *wfdv1.HandlerFinished
	for _, r := range collect(t, c, id, 0) {
		if f := r.GetHandlerFinished(); f != nil {
			fin = f
		}
	}
	want := map[string]any{"memo": "memo", "completed": 1.0, "answer": "yes", "by": "ann", "published": "pub"}
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("finished %v, want completed", fin)
	}
	if got := fin.GetResult().AsMap(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("result %v, want %v", got, want)
	}
	if n := onceRuns.Load(); n != 1 {
		t.Fatalf("Once ran its function %d times, want 1", n)
	}
}
