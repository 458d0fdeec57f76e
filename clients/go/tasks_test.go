package client_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/workflows"
)

var pending = []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_PENDING}

// waitTask polls until the handler has a task.
func waitTask(t *testing.T, c *client.Client, handler string) *wfdv1.Task {
	t.Helper()
	var task *wfdv1.Task
	testwait.For(t, "a task of "+handler, func() bool {
		ts, _, err := c.Tasks(ctxT(t), client.TaskOptions{HandlerID: handler})
		if err != nil {
			t.Fatal(err)
		}
		if len(ts) > 0 {
			task = ts[0]
		}
		return task != nil
	})
	return task
}

func taskIDs(t *testing.T, seq func(func(*wfdv1.Task, error) bool)) []string {
	t.Helper()
	var out []string
	for task, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, task.GetTaskId())
	}
	return out
}

func wantCode(t *testing.T, err error, code codes.Code, contains ...string) {
	t.Helper()
	if got := status.Code(err); got != code {
		t.Fatalf("code %v (%v), want %v", got, err, code)
	}
	for _, s := range contains {
		if msg := status.Convert(err).Message(); !strings.Contains(msg, s) {
			t.Errorf("message %q does not contain %q", msg, s)
		}
	}
}

// TestExpenseTasks is the inbox tour: tasks are listed by assignee and
// status, a bad answer is refused naming its fields, a good one completes
// the handler.
func TestExpenseTasks(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	// Each task exists before the next handler starts: newest first is
	// finance's, then ada's second, then her first.
	var ada, adaTasks []string // oldest first
	for range 2 {
		h, err := c.Run(ctxT(t), "expense", map[string]any{"amount": 120.0, "approver": "ada"})
		if err != nil {
			t.Fatal(err)
		}
		ada = append(ada, h.GetHandlerId())
		adaTasks = append(adaTasks, waitTask(t, c, h.GetHandlerId()).GetTaskId())
	}
	fin, err := c.Run(ctxT(t), "expense", nil) // assigned to finance
	if err != nil {
		t.Fatal(err)
	}
	finTask := waitTask(t, c, fin.GetHandlerId())
	if finTask.GetAssignee() != "finance" || finTask.GetTitle() != "Approve expense" || finTask.GetWorkflow() != "expense" ||
		finTask.GetStep() != "review" || finTask.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_PENDING || finTask.GetCreatedAt() == nil {
		t.Fatalf("finance's task %v", finTask)
	}
	if got := finTask.GetAnswerSchema().GetFields()["required"]; got.GetListValue().GetValues()[0].GetStringValue() != "approved" {
		t.Errorf("answer schema %v", finTask.GetAnswerSchema())
	}
	// The idle handler shows the task it waits for.
	idle := waitIdle(t, c, ada[0])
	if w := idle.GetIdle().GetWaiters(); len(w) != 1 || w[0].GetTask().GetTaskId() != adaTasks[0] || w[0].GetTask().GetAssignee() != "ada" {
		t.Fatalf("waiters %v", w)
	}

	// Answer ada's first task, then look at the inbox.
	for _, tt := range []struct {
		answer map[string]any
		fields []string
	}{
		{map[string]any{"approved": "yes"}, []string{"approved"}},
		{map[string]any{"approved": false}, []string{"reason"}},
		{map[string]any{"approved": true, "extra": 1.0}, []string{"extra"}},
	} {
		_, err := c.CompleteTask(ctxT(t), adaTasks[0], tt.answer, "ada")
		wantCode(t, err, codes.InvalidArgument, append([]string{"does not match the task's schema"}, tt.fields...)...)
	}
	if got, err := c.Task(ctxT(t), adaTasks[0]); err != nil || got.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_PENDING {
		t.Fatalf("after bad answers: %v %v", got, err)
	}
	// The handler can be released: the answer wakes it.
	if _, err := c.Release(ctxT(t), ada[0]); err != nil {
		t.Fatal(err)
	}
	answer := map[string]any{"approved": false, "reason": "no receipt"}
	done, err := c.CompleteTask(ctxT(t), adaTasks[0], answer, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if done.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_COMPLETED || done.GetCompletedBy() != "ada" || done.GetCompletedAt() == nil ||
		done.GetAnswer().GetFields()["reason"].GetStringValue() != "no receipt" {
		t.Fatalf("completed task %v", done)
	}
	recs := drain(t, c, ada[0], 0)
	res := recs[len(recs)-1].GetHandlerFinished().GetResult().GetFields()
	if res["reviewed_by"].GetStringValue() != "ada" || res["decision"].GetStructValue().GetFields()["reason"].GetStringValue() != "no receipt" {
		t.Fatalf("finished %v", recs[len(recs)-1])
	}

	tests := []struct {
		name string
		opts client.TaskOptions
		want []string // newest first
	}{
		{"all", client.TaskOptions{}, []string{finTask.GetTaskId(), adaTasks[1], adaTasks[0]}},
		{"ada", client.TaskOptions{Assignee: "ada"}, []string{adaTasks[1], adaTasks[0]}},
		{"ada pending", client.TaskOptions{Assignee: "ada", Statuses: pending}, []string{adaTasks[1]}},
		{"completed", client.TaskOptions{Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_COMPLETED}}, []string{adaTasks[0]}},
		{"pending or completed", client.TaskOptions{Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_PENDING, wfdv1.TaskStatus_TASK_STATUS_COMPLETED}},
			[]string{finTask.GetTaskId(), adaTasks[1], adaTasks[0]}},
		{"handler", client.TaskOptions{HandlerID: ada[1]}, []string{adaTasks[1]}},
		{"workflow", client.TaskOptions{Workflow: "expense", Assignee: "finance"}, []string{finTask.GetTaskId()}},
		{"other workflow", client.TaskOptions{Workflow: "approval"}, nil},
		{"small pages", client.TaskOptions{PageSize: 1}, []string{finTask.GetTaskId(), adaTasks[1], adaTasks[0]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := taskIDs(t, c.AllTasks(ctxT(t), tt.opts)); !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("pages", func(t *testing.T) {
		page, next, err := c.Tasks(ctxT(t), client.TaskOptions{PageSize: 2})
		if err != nil || len(page) != 2 || next == "" {
			t.Fatalf("first page: %d tasks, next %q, %v", len(page), next, err)
		}
		page, next, err = c.Tasks(ctxT(t), client.TaskOptions{PageSize: 2, PageToken: next})
		if err != nil || len(page) != 1 || next != "" {
			t.Fatalf("last page: %d tasks, next %q, %v", len(page), next, err)
		}
	})

	t.Run("answer again", func(t *testing.T) {
		// The same answer by the same person is what a retry after a lost
		// response sends: it succeeds with the task as completed.
		again, err := c.CompleteTask(ctxT(t), adaTasks[0], answer, "ada")
		if err != nil || !again.GetCompletedAt().AsTime().Equal(done.GetCompletedAt().AsTime()) {
			t.Fatalf("the same answer again: %v %v", again, err)
		}
		_, err = c.CompleteTask(ctxT(t), adaTasks[0], map[string]any{"approved": true}, "ada")
		wantCode(t, err, codes.FailedPrecondition, "completed")
		_, err = c.CompleteTask(ctxT(t), adaTasks[0], answer, "bob")
		wantCode(t, err, codes.FailedPrecondition, "completed")
	})
	t.Run("cancelled", func(t *testing.T) {
		if _, err := c.Cancel(ctxT(t), fin.GetHandlerId()); err != nil {
			t.Fatal(err)
		}
		_, err := c.CompleteTask(ctxT(t), finTask.GetTaskId(), map[string]any{"approved": true}, "")
		wantCode(t, err, codes.FailedPrecondition, "cancelled")
	})
	t.Run("struct answer", func(t *testing.T) {
		got, err := c.CompleteTask(ctxT(t), adaTasks[1], map[string]any{"ignored": true}, "",
			client.WithAnswerStruct(mustStruct(t, map[string]any{"approved": true})))
		if err != nil || got.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_COMPLETED || got.GetCompletedBy() != "" {
			t.Fatalf("%v %v", got, err)
		}
	})
	t.Run("errors", func(t *testing.T) {
		_, err := c.Task(ctxT(t), "nope")
		wantCode(t, err, codes.NotFound, "nope")
		_, err = c.CompleteTask(ctxT(t), "nope", nil, "")
		wantCode(t, err, codes.NotFound, "nope")
		_, err = c.CompleteTask(ctxT(t), adaTasks[1], map[string]any{"f": func() {}}, "")
		wantCode(t, err, codes.InvalidArgument, "answer")
		_, _, err = c.Tasks(ctxT(t), client.TaskOptions{PageSize: 5000})
		wantCode(t, err, codes.InvalidArgument, "page_size")
		_, _, err = c.Tasks(ctxT(t), client.TaskOptions{Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_UNSPECIFIED}})
		wantCode(t, err, codes.InvalidArgument, "status")
	})
}

// dropFirst makes the first attempt of method reach the server and then
// fail with codes.Unavailable, as if the response had been lost.
func dropFirst(method string, attempts *atomic.Int32) client.Option {
	return client.WithDialOptions(grpc.WithChainUnaryInterceptor(
		func(ctx context.Context, m string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			if m != method {
				return invoker(ctx, m, req, reply, cc, opts...)
			}
			err := invoker(ctx, m, req, reply, cc, opts...)
			if attempts.Add(1) == 1 && err == nil {
				return status.Error(codes.Unavailable, "test: response lost")
			}
			return err
		}))
}

// TestRetriesAfterLostResponse: CompleteTask and Publish whose first
// response is lost are retried, and succeed without a second effect.
func TestRetriesAfterLostResponse(t *testing.T) {
	ts := startServer(t)
	direct := dial(t, ts.addr)

	t.Run("complete", func(t *testing.T) {
		var n atomic.Int32
		c := dial(t, ts.addr, dropFirst("/wfd.v1.WorkflowService/CompleteTask", &n))
		h, err := c.Run(ctxT(t), "expense", map[string]any{"approver": "ada"})
		if err != nil {
			t.Fatal(err)
		}
		task := waitTask(t, c, h.GetHandlerId())
		got, err := c.CompleteTask(ctxT(t), task.GetTaskId(), map[string]any{"approved": true}, "ada")
		if err != nil || got.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_COMPLETED || got.GetCompletedBy() != "ada" {
			t.Fatalf("%v %v", got, err)
		}
		if n.Load() != 2 {
			t.Errorf("%d attempts, want 2", n.Load())
		}
		checkSeqs(t, drain(t, c, h.GetHandlerId(), 0), 0)
	})

	t.Run("publish", func(t *testing.T) {
		var n atomic.Int32
		c := dial(t, ts.addr, dropFirst("/wfd.v1.WorkflowService/PublishEvent", &n))
		h, err := c.Run(ctxT(t), "order", map[string]any{"order_id": "R1"})
		if err != nil {
			t.Fatal(err)
		}
		waitIdle(t, c, h.GetHandlerId())
		res, err := c.Publish(ctxT(t), workflows.PaymentKey("R1"), map[string]any{"amount": 3.0})
		if err != nil {
			t.Fatal(err)
		}
		if n.Load() != 2 || res.GetEventId() == "" {
			t.Fatalf("%d attempts, response %v", n.Load(), res)
		}
		// The retry appended nothing: the next event comes right after.
		next, err := direct.Publish(ctxT(t), "other", nil)
		if err != nil || next.GetSeq() != res.GetSeq()+1 {
			t.Fatalf("next publication %v (%v) after seq %d", next, err, res.GetSeq())
		}
		recs := drain(t, c, h.GetHandlerId(), 0)
		if got := recs[len(recs)-1].GetHandlerFinished().GetResult().GetFields()["payment"]; got.GetStructValue().GetFields()["amount"].GetNumberValue() != 3 {
			t.Fatalf("finished %v", recs[len(recs)-1])
		}
	})
}

// TestPublishWakesOrder: an order waits for its payment's key, is released,
// and the publication wakes and completes it.
func TestPublishWakesOrder(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "order", map[string]any{"order_id": "A1"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.Run(ctxT(t), "order", map[string]any{"order_id": "B2"})
	if err != nil {
		t.Fatal(err)
	}
	id := h.GetHandlerId()
	idle := waitIdle(t, c, id)
	if w := idle.GetIdle().GetWaiters(); len(w) != 1 || w[0].GetKey() != "payment:A1" {
		t.Fatalf("waiters %v", w)
	}
	waitIdle(t, c, other.GetHandlerId())
	if rel, err := c.Release(ctxT(t), id); err != nil || rel.GetResidency() != wfdv1.Residency_RESIDENCY_RELEASED {
		t.Fatalf("release: %v %v", rel, err)
	}
	// Addressed to another handler: nobody wakes.
	res, err := c.Publish(ctxT(t), workflows.PaymentKey("A1"), nil, client.WithPublishHandler(other.GetHandlerId()))
	if err != nil || res.GetWoken() != 0 {
		t.Fatalf("publish to another handler: %v %v", res, err)
	}
	res, err = c.Publish(ctxT(t), workflows.PaymentKey("A1"), map[string]any{"amount": 9.5}, client.WithEventID("pay-A1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.GetWoken() != 1 || res.GetEventId() != "pay-A1" || res.GetSeq() == 0 {
		t.Fatalf("publish: %v", res)
	}
	recs := drain(t, c, id, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED ||
		fin.GetResult().GetFields()["payment"].GetStructValue().GetFields()["amount"].GetNumberValue() != 9.5 {
		t.Fatalf("finished %v", fin)
	}
	var restored bool
	for _, r := range recs {
		restored = restored || r.GetHandlerRestored() != nil
	}
	if !restored {
		t.Error("the released order was not restored")
	}
	// The same event id again: the first publication, nobody woken.
	again, err := c.Publish(ctxT(t), workflows.PaymentKey("A1"), map[string]any{"amount": 1.0}, client.WithEventID("pay-A1"))
	if err != nil || again.GetSeq() != res.GetSeq() || again.GetWoken() != 0 {
		t.Fatalf("republished: %v %v (first %v)", again, err, res)
	}
	// Struct data, for the other order.
	res, err = c.Publish(ctxT(t), workflows.PaymentKey("B2"), nil, client.WithPublishDataStruct(mustStruct(t, map[string]any{"amount": 2.0})))
	if err != nil || res.GetWoken() != 1 {
		t.Fatalf("publish B2: %v %v", res, err)
	}
	recs = drain(t, c, other.GetHandlerId(), 0)
	if got := recs[len(recs)-1].GetHandlerFinished().GetResult().GetFields()["payment"]; got.GetStructValue().GetFields()["amount"].GetNumberValue() != 2 {
		t.Fatalf("finished %v", recs[len(recs)-1])
	}

	_, err = c.Publish(ctxT(t), "", nil)
	wantCode(t, err, codes.InvalidArgument, "key")
	_, err = c.Publish(ctxT(t), "k", nil, client.WithEventID("no spaces"))
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.Publish(ctxT(t), "k", map[string]any{"f": func() {}})
	wantCode(t, err, codes.InvalidArgument, "data")
}

// TestBatchChildren: a batch parent lists its children, each child names
// its parent, and failures are reported.
func TestBatchChildren(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)

	t.Run("waiting", func(t *testing.T) {
		h, err := c.Run(ctxT(t), "batch", map[string]any{"n": 3.0, "job_wait": "go"})
		if err != nil {
			t.Fatal(err)
		}
		idle := waitIdle(t, c, h.GetHandlerId())
		w := idle.GetIdle().GetWaiters()
		if len(w) != 1 || len(w[0].GetChildren()) != 3 || !slices.Equal(w[0].GetChildren(), idle.GetChildren()) {
			t.Fatalf("waiters %v, children %v", w, idle.GetChildren())
		}
		for _, k := range idle.GetChildren() {
			waitIdle(t, c, k)
			if _, err := c.Send(ctxT(t), k, "go", nil); err != nil {
				t.Fatal(err)
			}
		}
		recs := drain(t, c, h.GetHandlerId(), 0)
		if got := recs[len(recs)-1].GetHandlerFinished().GetResult().GetFields()["completed"]; len(got.GetListValue().GetValues()) != 3 {
			t.Fatalf("finished %v", recs[len(recs)-1])
		}
	})

	t.Run("failures", func(t *testing.T) {
		h, err := c.Run(ctxT(t), "batch", map[string]any{"n": 5.0, "fail": []any{1.0, 3.0}})
		if err != nil {
			t.Fatal(err)
		}
		recs := drain(t, c, h.GetHandlerId(), 0)
		res := recs[len(recs)-1].GetHandlerFinished().GetResult().GetFields()
		var failed []string
		for _, v := range res["failed"].GetListValue().GetValues() {
			failed = append(failed, v.GetStringValue())
		}
		if len(failed) != 2 || len(res["completed"].GetListValue().GetValues()) != 3 {
			t.Fatalf("finished %v", res)
		}
		parent, err := c.Get(ctxT(t), h.GetHandlerId())
		if err != nil {
			t.Fatal(err)
		}
		if parent.GetParentId() != "" || len(parent.GetChildren()) != 5 {
			t.Fatalf("parent %v", parent)
		}
		for i, k := range parent.GetChildren() {
			child, err := c.Get(ctxT(t), k)
			if err != nil {
				t.Fatal(err)
			}
			want := wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
			if i == 1 || i == 3 {
				want = wfdv1.HandlerStatus_HANDLER_STATUS_FAILED
				if !slices.Contains(failed, k) || !strings.Contains(child.GetError(), "failed as asked") {
					t.Errorf("child %d %v is not among the failed %v", i, child, failed)
				}
			}
			if child.GetParentId() != h.GetHandlerId() || child.GetWorkflow() != "job" || child.GetStatus() != want || len(child.GetChildren()) != 0 {
				t.Errorf("child %d: %v", i, child)
			}
		}
	})
}

func TestStats(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	s, err := c.Stats(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.GetHandlersActive() != 0 || s.GetReleasesTotal() != 0 {
		t.Fatalf("stats of a new server: %v", s)
	}
	done, err := c.Run(ctxT(t), "echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	drain(t, c, done.GetHandlerId(), 0)
	var idle []string
	for range 2 {
		h, err := c.Run(ctxT(t), "approval", nil)
		if err != nil {
			t.Fatal(err)
		}
		waitIdle(t, c, h.GetHandlerId())
		idle = append(idle, h.GetHandlerId())
	}
	if _, err := c.Release(ctxT(t), idle[0]); err != nil {
		t.Fatal(err)
	}
	s, err = c.Stats(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	by := s.GetHandlersByStatus()
	if s.GetHandlersActive() != 1 || s.GetHandlersIdleInMemory() != 1 || s.GetHandlersReleased() != 1 || s.GetReleasesTotal() != 1 ||
		by["running"] != 2 || by["completed"] != 1 || s.GetCommitsTotal() == 0 || s.GetChangesTotal() == 0 {
		t.Fatalf("stats %v", s)
	}
	// Waking the released handler counts a rehydration.
	if _, err := c.Send(ctxT(t), idle[0], "approval", map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	drain(t, c, idle[0], 0)
	if s, err = c.Stats(ctxT(t)); err != nil || s.GetRehydrationsTotal() != 1 || s.GetHandlersByStatus()["completed"] != 2 || s.GetRehydrateLatencyP50() == nil {
		t.Fatalf("stats after a rehydration: %v %v", s, err)
	}
}

// TestCancelTask: CancelTask ends a pending task with its reason and the
// expense completes with the cancellation; a repeat of it returns the
// task, another one is FailedPrecondition.
func TestCancelTask(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	h, err := c.Run(ctxT(t), "expense", map[string]any{"amount": 1.0, "approver": "ada"})
	if err != nil {
		t.Fatal(err)
	}
	task := waitTask(t, c, h.GetHandlerId()).GetTaskId()
	got, err := c.CancelTask(ctxT(t), task, "withdrawn", "bob")
	if err != nil || got.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_CANCELLED || got.GetCancelReason() != "withdrawn" || got.GetCompletedBy() != "bob" {
		t.Fatalf("CancelTask = %v, %v", got, err)
	}
	if again, err := c.CancelTask(ctxT(t), task, "withdrawn", "bob"); err != nil || again.GetCancelReason() != "withdrawn" {
		t.Fatalf("a repeat of the cancellation = %v, %v, want the task", again, err)
	}
	if _, err := c.CancelTask(ctxT(t), task, "other reason", "bob"); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("another cancellation: %v, want FailedPrecondition", err)
	}
	end, err := c.Wait(ctxT(t), h.GetHandlerId(), time.Minute)
	if err != nil || end.GetResult().GetFields()["reason"].GetStringValue() != "withdrawn" {
		t.Fatalf("the expense ended %v, %v", end.GetResult(), err)
	}
}
