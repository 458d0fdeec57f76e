package server_test

import (
	"fmt"
	"slices"
	"testing"

	"connectrpc.com/connect"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestCancelTask: a pending task cancelled with a reason ends CANCELLED
// with its reason and who; the step that asked gets the cancellation as
// its typed answer (expense completes with cancelled, the reason and
// who), also when its handler was released; a second cancel, or an
// answer after it, is FAILED_PRECONDITION; a cancel without a reason or
// of an unknown task is refused.
func TestCancelTask(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	for _, released := range []bool{false, true} {
		h := run(t, c, "expense", map[string]any{"amount": 12.0, "approver": "ada"})
		task := waitTask(t, c, h.HandlerId)
		if released {
			waitIdle(t, c, h.HandlerId)
			if _, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: h.HandlerId}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := c.CancelTask(ctxT(t), &wfdv1.CancelTaskRequest{TaskId: task.TaskId, Reason: "the trip was called off", CancelledBy: "bob"})
		if err != nil {
			t.Fatalf("CancelTask (released %v): %v", released, err)
		}
		got := res.GetTask()
		if got.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_CANCELLED || got.GetCancelReason() != "the trip was called off" || got.GetCompletedBy() != "bob" {
			t.Fatalf("cancelled task: %v", got)
		}
		end := waitStatus(t, c, h.HandlerId, wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
		f := end.GetResult().GetFields()
		if !f["cancelled"].GetBoolValue() || f["reason"].GetStringValue() != "the trip was called off" || f["by"].GetStringValue() != "bob" {
			t.Fatalf("expense ended with %v, want the cancellation as its answer", end.GetResult())
		}
		// The stream records the task's changes: asked, then cancelled.
		var changes []string
		for _, r := range collect(t, c, h.HandlerId, 0) {
			if tc := r.GetTaskChanged(); tc != nil {
				changes = append(changes, fmt.Sprintf("%s %v %s %s", tc.GetTaskId(), tc.GetChange(), tc.GetBy(), tc.GetReason()))
			}
		}
		want := []string{task.TaskId + " TASK_CHANGE_ASKED  ", task.TaskId + " TASK_CHANGE_CANCELLED bob the trip was called off"}
		if !slices.Equal(changes, want) {
			t.Fatalf("task records: %q, want %q", changes, want)
		}
		_, err = c.CancelTask(ctxT(t), &wfdv1.CancelTaskRequest{TaskId: task.TaskId, Reason: "again"})
		wantCode(t, err, connect.CodeFailedPrecondition, "cancelled")
		_, err = c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, Answer: st(t, map[string]any{"approved": true})})
		wantCode(t, err, connect.CodeFailedPrecondition, "cancelled")
	}
	_, err := c.CancelTask(ctxT(t), &wfdv1.CancelTaskRequest{TaskId: "nope:1", Reason: "x"})
	wantCode(t, err, connect.CodeNotFound, "")
	h := run(t, c, "expense", map[string]any{"amount": 1.0})
	task := waitTask(t, c, h.HandlerId)
	_, err = c.CancelTask(ctxT(t), &wfdv1.CancelTaskRequest{TaskId: task.TaskId})
	wantCode(t, err, connect.CodeInvalidArgument, "reason")
}
