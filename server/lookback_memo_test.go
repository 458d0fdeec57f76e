package server_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// memoWorkflow memoizes a quote (Once), then waits for "go" and completes.
func memoWorkflow() engine.Workflow {
	return engine.Workflow{
		Name:     "memo",
		External: []string{"go"},
		Steps: []engine.Step{{
			Name: "quote", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				v, err := sc.Once("quote", func() (*structpb.Value, error) { return structpb.NewNumberValue(42), nil })
				if err != nil {
					return err
				}
				if _, err := sc.WaitFor("go", engine.WaitOptions{}); err != nil {
					return err
				}
				return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"quote": v}})
			},
		}},
	}
}

// TestLookBackMemosAndTasks: looking back at a record shows the memos
// the step runs held then (gone once the run ended) and the human tasks
// as they stood (claimed, commented on, answered, with the answer).
func TestLookBackMemosAndTasks(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: append(workflows.All(), memoWorkflow())})
	c := ts.client()
	at := func(id string, seq uint64) *wfdv1.HandlerAt {
		t.Helper()
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id, AtSeq: seq})
		if err != nil {
			t.Fatalf("GetHandler %s at %d: %v", id, seq, err)
		}
		return res.GetAt()
	}

	m := run(t, c, "memo", map[string]any{})
	parked := waitIdle(t, c, m.HandlerId)
	memos := at(m.HandlerId, parked.LastSeq).GetMemos()
	if len(memos) != 1 || memos[0].GetStep() != "quote" || memos[0].GetKey() != "quote" || memos[0].GetValue().GetNumberValue() != 42 {
		t.Fatalf("memos while parked: %v", memos)
	}
	if _, err := sendEv(t, c, m.HandlerId, "go", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	end := waitStatus(t, c, m.HandlerId, wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
	if got := at(m.HandlerId, end.LastSeq).GetMemos(); len(got) != 0 {
		t.Fatalf("memos once the run ended: %v", got)
	}

	h := run(t, c, "expense", map[string]any{"amount": 5.0, "approver": "ada"})
	task := waitTask(t, c, h.HandlerId)
	if _, err := c.ClaimTask(ctxT(t), &wfdv1.ClaimTaskRequest{TaskId: task.TaskId, By: "ada"}); err != nil {
		t.Fatal(err)
	}
	claimedAt := lastSeq(t, c, h.HandlerId)
	if _, err := c.CommentTask(ctxT(t), &wfdv1.CommentTaskRequest{TaskId: task.TaskId, By: "ada", Text: "ok"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteTask(ctxT(t), &wfdv1.CompleteTaskRequest{TaskId: task.TaskId, CompletedBy: "ada",
		Answer: st(t, map[string]any{"approved": true})}); err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, c, h.HandlerId, wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED)
	then := at(h.HandlerId, claimedAt).GetTasks()
	if len(then) != 1 || then[0].GetClaimedBy() != "ada" || then[0].GetChange() != wfdv1.TaskChange_TASK_CHANGE_CLAIMED || then[0].GetAnswer() != nil {
		t.Fatalf("tasks when claimed: %v", then)
	}
	now := at(h.HandlerId, done.LastSeq).GetTasks()
	if len(now) != 1 || now[0].GetChange() != wfdv1.TaskChange_TASK_CHANGE_ANSWERED || now[0].GetComments() != 1 ||
		!now[0].GetAnswer().GetFields()["approved"].GetBoolValue() {
		t.Fatalf("tasks at the end: %v", now)
	}
}

// lastSeq is the handler's last record's sequence number now.
func lastSeq(t *testing.T, c interface {
	GetHandler(context.Context, *wfdv1.GetHandlerRequest) (*wfdv1.GetHandlerResponse, error)
}, id string) uint64 {
	t.Helper()
	res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetHandler().GetLastSeq()
}
