package server_test

import (
	"fmt"
	"strings"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
)

func pendingTasks(t *testing.T, c wfdv1connect.WorkflowServiceClient, req *wfdv1.ListTasksRequest) []*wfdv1.Task {
	t.Helper()
	res, err := c.ListTasks(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tasks
}

func waitTask(t *testing.T, c wfdv1connect.WorkflowServiceClient, handler string) *wfdv1.Task {
	t.Helper()
	var task *wfdv1.Task
	testwait.For(t, "a pending task for "+handler, func() bool {
		ts := pendingTasks(t, c, &wfdv1.ListTasksRequest{HandlerId: handler})
		if len(ts) > 0 {
			task = ts[0]
		}
		return task != nil
	})
	return task
}

func TestHumanTasks(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir})
	c := ts.client()
	h := run(t, c, "expense", map[string]any{"amount": 120.0, "approver": "ada"})
	task := waitTask(t, c, h.HandlerId)
	if task.Title != "Approve expense" || task.Assignee != "ada" || task.Status != wfdv1.TaskStatus_TASK_STATUS_PENDING ||
		task.AnswerSchema == nil || task.Workflow != "expense" || task.Step != "review" {
		t.Fatalf("task %v", task)
	}
	idle := waitIdle(t, c, h.HandlerId)
	if w := idle.Idle.Waiters; len(w) != 1 || w[0].Task.GetTaskId() != task.TaskId {
		t.Fatalf("idle waiters %v", w)
	}
	// The task carries the report as structured input (issue 28), in the
	// task and in the handler's waiter alike, across a restart of the
	// handler from its checkpoint.
	if in := task.GetInput().GetFields(); in["amount"].GetNumberValue() != 120 || in["approver"].GetStringValue() != "ada" {
		t.Fatalf("task input %v", task.GetInput())
	}
	if in := idle.Idle.Waiters[0].Task.GetInput().GetFields(); in["amount"].GetNumberValue() != 120 {
		t.Fatalf("waiter's task input %v", idle.Idle.Waiters[0].Task.GetInput())
	}
	release(t, c, h.HandlerId)
	if got, err := c.GetTask(ctxT(t), &wfdv1.GetTaskRequest{TaskId: task.TaskId}); err != nil || got.Task.GetInput().GetFields()["amount"].GetNumberValue() != 120 {
		t.Fatalf("GetTask after a release: %v, %v", got, err)
	}

	// Bad answers change nothing.
	for _, bad := range []map[string]any{{"approved": "yes"}, {"approved": false}, {"approved": true, "extra": 1.0}} {
		_, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: st(t, bad), CompletedBy: "ada"})
		wantCode(t, err, connect.CodeInvalidArgument, "does not match the task's schema")
	}
	_, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: st(t, map[string]any{"approved": "yes"})})
	if !strings.Contains(err.Error(), "approved") {
		t.Fatalf("the error does not name the failing field: %v", err)
	}
	if got, _ := c.GetTask(ctxT(t), &wfdv1.GetTaskRequest{TaskId: task.TaskId}); got.Task.Status != wfdv1.TaskStatus_TASK_STATUS_PENDING {
		t.Fatalf("after bad answers: %v", got.Task)
	}

	// The inbox survives a restart and works on a released handler.
	release(t, c, h.HandlerId)
	ts.stop()
	ts = startServer(t, serverConfig{dir: dir})
	c = ts.client(connect.WithGRPC())
	if inbox := pendingTasks(t, c, &wfdv1.ListTasksRequest{Assignee: "ada", Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_PENDING}}); len(inbox) != 1 {
		t.Fatalf("ada's inbox after restart: %v", inbox)
	}
	res, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, CompletedBy: "ada",
		Answer: st(t, map[string]any{"approved": false, "reason": "no receipt"})})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Task; got.Status != wfdv1.TaskStatus_TASK_STATUS_COMPLETED || got.CompletedBy != "ada" || got.CompletedAt == nil ||
		got.Answer.Fields["reason"].GetStringValue() != "no receipt" {
		t.Fatalf("completed task %v", got)
	}
	recs := collect(t, c, h.HandlerId, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	if fin.GetResult().Fields["reviewed_by"].GetStringValue() != "ada" || fin.GetResult().Fields["decision"].GetStructValue().Fields["approved"].GetBoolValue() {
		t.Fatalf("finished %v", fin)
	}
	_, err = c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: st(t, map[string]any{"approved": true})})
	wantCode(t, err, connect.CodeFailedPrecondition, "completed")
	if inbox := pendingTasks(t, c, &wfdv1.ListTasksRequest{Assignee: "ada", Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_PENDING}}); len(inbox) != 0 {
		t.Fatalf("ada's inbox after answering: %v", inbox)
	}
	_, err = c.GetTask(ctxT(t), &wfdv1.GetTaskRequest{TaskId: "nope"})
	wantCode(t, err, connect.CodeNotFound, "nope")
	_, err = c.SendEvent(ctxT(t), &wfdv1.SendEventRequest{HandlerId: h.HandlerId, Event: &wfdv1.Event{Type: "wfd.task"}})
	wantCode(t, err, connect.CodeInvalidArgument, "reserved")
}

func TestTaskExpiresAndCancels(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	h := run(t, c, "expense", map[string]any{"deadline_s": 0.2})
	task := waitTask(t, c, h.HandlerId)
	release(t, c, h.HandlerId) // the deadline fires for a released handler too
	recs := collect(t, c, h.HandlerId, 0)
	if !recs[len(recs)-1].GetHandlerFinished().GetResult().Fields["expired"].GetBoolValue() {
		t.Fatalf("stream %s", kinds(recs))
	}
	got, err := c.GetTask(ctxT(t), &wfdv1.GetTaskRequest{TaskId: task.TaskId})
	if err != nil || got.Task.Status != wfdv1.TaskStatus_TASK_STATUS_EXPIRED {
		t.Fatalf("task after its deadline: %v %v", got, err)
	}
	_, err = c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: st(t, map[string]any{"approved": true})})
	wantCode(t, err, connect.CodeFailedPrecondition, "expired")

	h = run(t, c, "expense", nil)
	task = waitTask(t, c, h.HandlerId)
	if task.Assignee != "finance" {
		t.Fatalf("default assignee %q", task.Assignee)
	}
	if _, err := c.CancelHandler(ctxT(t), &wfdv1.CancelHandlerRequest{HandlerId: h.HandlerId}); err != nil {
		t.Fatal(err)
	}
	got, _ = c.GetTask(ctxT(t), &wfdv1.GetTaskRequest{TaskId: task.TaskId})
	if got.Task.Status != wfdv1.TaskStatus_TASK_STATUS_CANCELLED {
		t.Fatalf("task of a cancelled handler: %v", got.Task)
	}
}

// TestInbox: 10,000 tasks over released handlers, filtered by assignee.
func TestInbox(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 handlers")
	}
	n, people := 10000, 50
	if raceEnabled {
		n = 1000
	}
	ts := startServer(t, serverConfig{maxIdle: 100})
	c := ts.client(connect.WithGRPC())
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense",
				Input: st(t, map[string]any{"approver": "p" + string(rune('A'+i%people))})})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var mine []*wfdv1.Task
	testwait.Until(t, func() error {
		mine = nil
		token := ""
		for {
			res, err := c.ListTasks(ctxT(t), &wfdv1.ListTasksRequest{Assignee: "pC", PageSize: 100, PageToken: token,
				Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_PENDING}})
			if err != nil {
				t.Fatal(err)
			}
			mine = append(mine, res.Tasks...)
			if token = res.NextPageToken; token == "" {
				break
			}
		}
		if len(mine) != n/people {
			return fmt.Errorf("pC's inbox holds %d tasks, want %d", len(mine), n/people)
		}
		return nil
	})
	for i, task := range mine {
		if task.Assignee != "pC" || (i > 0 && task.CreatedAt.AsTime().After(mine[i-1].CreatedAt.AsTime())) {
			t.Fatalf("task %d: %v (not pC's, or not newest first)", i, task)
		}
	}
	// The cap releases the least recently active in the background.
	testwait.Until(t, func() error {
		if s := stats(t, c); s.HandlersReleased < int64(n-200) {
			return fmt.Errorf("most handlers should be released: %v", s)
		}
		return nil
	})
	// Answering one from the inbox wakes its released handler.
	if _, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: mine[len(mine)-1].TaskId, Answer: st(t, map[string]any{"approved": true})}); err != nil {
		t.Fatal(err)
	}
	if k := kinds(collect(t, c, mine[len(mine)-1].HandlerId, 0)); !strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("stream %s", k)
	}
}
