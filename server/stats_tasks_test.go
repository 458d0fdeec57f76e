package server_test

import (
	"fmt"
	"testing"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestStatsTasksPending: GetStats counts the tasks waiting for an answer,
// of handlers in memory and released, and stops counting an answered one.
func TestStatsTasksPending(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	var ids []string
	for i := range 3 {
		res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense", Input: st(t, map[string]any{"approver": fmt.Sprintf("p%d", i)})})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.GetHandler().GetHandlerId())
	}
	for _, id := range ids {
		waitIdle(t, c, id)
	}
	release(t, c, ids[0])
	wantPending := func(n int64) {
		t.Helper()
		testwait.Until(t, func() error {
			if got := stats(t, c).GetTasksPending(); got != n {
				return fmt.Errorf("tasks_pending %d, want %d", got, n)
			}
			return nil
		})
	}
	wantPending(3)
	tasks, err := c.ListTasks(ctxT(t), &wfdv1.ListTasksRequest{HandlerId: ids[0]})
	if err != nil || len(tasks.GetTasks()) != 1 {
		t.Fatalf("tasks of the released handler: %v, %v", tasks, err)
	}
	if _, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: tasks.GetTasks()[0].GetTaskId(), Answer: st(t, map[string]any{"approved": true})}); err != nil {
		t.Fatal(err)
	}
	wantPending(2)
}
