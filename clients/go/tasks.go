package client

import (
	"context"
	"iter"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TaskOptions filter and page Tasks. The zero value lists every human
// task, newest first, in pages of the server's default size (100).
type TaskOptions struct {
	// Statuses keeps the tasks with one of these statuses.
	Statuses []wfdv1.TaskStatus
	// Assignee keeps the tasks assigned to this person, or group
	// ("group:<role>").
	Assignee string
	// Mine keeps the caller's tasks: those assigned to its authenticated
	// subject or to "group:<role>" for one of its roles. The server must
	// authenticate (FailedPrecondition otherwise); not with Assignee.
	Mine bool
	// Workflow keeps the tasks of this workflow's handlers.
	Workflow string
	// HandlerID keeps the tasks of this handler.
	HandlerID string
	// Claim keeps the tasks someone holds (TASK_CLAIM_CLAIMED) or nobody
	// does (TASK_CLAIM_UNCLAIMED).
	Claim wfdv1.TaskClaim
	// Overdue keeps the pending tasks whose deadline has passed.
	Overdue bool
	// PageSize is the most tasks per page (at most 1000).
	PageSize int
	// PageToken continues from an earlier page.
	PageToken string
}

func (o *TaskOptions) request() (*wfdv1.ListTasksRequest, error) {
	size, err := pageSize(o.PageSize)
	if err != nil {
		return nil, err
	}
	return &wfdv1.ListTasksRequest{
		Statuses: o.Statuses, Assignee: o.Assignee, Mine: o.Mine, Workflow: o.Workflow, HandlerId: o.HandlerID,
		Claim: o.Claim, Overdue: o.Overdue, PageSize: size, PageToken: o.PageToken,
	}, nil
}

// Tasks returns one page of human tasks (the inbox, across handlers in
// memory and released), newest first, and the token of the next page (""
// after the last).
func (c *Client) Tasks(ctx context.Context, opts TaskOptions) ([]*wfdv1.Task, string, error) {
	req, err := opts.request()
	if err != nil {
		return nil, "", err
	}
	res, err := c.svc.ListTasks(ctx, req)
	if err != nil {
		return nil, "", err
	}
	return res.GetTasks(), res.GetNextPageToken(), nil
}

// AllTasks yields every task that opts select, page after page, from
// opts.PageToken on. It stops after the first error, which it yields.
func (c *Client) AllTasks(ctx context.Context, opts TaskOptions) iter.Seq2[*wfdv1.Task, error] {
	return allPages(opts.PageToken, func(token string) ([]*wfdv1.Task, string, error) {
		opts.PageToken = token
		return c.Tasks(ctx, opts)
	})
}

// Task returns the human task with that id (codes.NotFound if there is
// none).
func (c *Client) Task(ctx context.Context, id string) (*wfdv1.Task, error) {
	res, err := c.svc.GetTask(ctx, &wfdv1.GetTaskRequest{TaskId: id})
	if err != nil {
		return nil, err
	}
	return res.GetTask(), nil
}

// CompleteOption configures CompleteTask.
type CompleteOption func(*wfdv1.CompleteTaskRequest)

// WithAnswerStruct sets the answer as a Struct, in place of CompleteTask's
// map.
func WithAnswerStruct(s *structpb.Struct) CompleteOption {
	return func(r *wfdv1.CompleteTaskRequest) { r.Answer = s }
}

// CompleteTask answers a pending task on behalf of completedBy and returns
// the task, completed, once its handler has taken the answer (a released
// handler is loaded again).
//
// An answer that fails the task's JSON Schema is codes.InvalidArgument,
// with a message that names the failing fields, and changes nothing; the
// task stays pending. A task that is no longer pending (completed,
// expired, or cancelled because its handler ended) is
// codes.FailedPrecondition; the message says which.
//
// CompleteTask is safe to retry. The server takes one answer per task, so
// a repeat of a call that got through (a retry after a lost response, by
// this client or by the caller) would be codes.FailedPrecondition
// "... is completed". On that error CompleteTask reads the task, and if it
// was completed by the same completedBy with an equal answer it returns
// the task and no error: the answer given is the answer taken. Another
// person's answer, or a different one, stays codes.FailedPrecondition.
func (c *Client) CompleteTask(ctx context.Context, id string, answer map[string]any, completedBy string, opts ...CompleteOption) (*wfdv1.Task, error) {
	a, err := toStruct("answer", answer)
	if err != nil {
		return nil, err
	}
	req := &wfdv1.CompleteTaskRequest{TaskId: id, Answer: a, CompletedBy: completedBy}
	for _, opt := range opts {
		opt(req)
	}
	res, err := c.svc.CompleteTask(ctx, req)
	if err == nil {
		return res.GetTask(), nil
	}
	if status.Code(err) != codes.FailedPrecondition {
		return nil, err
	}
	t, gerr := c.Task(ctx, id)
	if gerr == nil && sameAnswer(t, req) {
		return t, nil
	}
	return nil, err
}

// CancelTask cancels a pending task for reason, on behalf of cancelledBy
// (the caller's subject with authentication), and returns the task,
// cancelled, once its handler has taken the cancellation: the step that
// waited for it gets a flow.TaskAnswer with Cancelled and Reason set. A
// task that is no longer pending is codes.FailedPrecondition; a retry of
// a cancellation that got through, with the same reason by the same
// person, returns the task and no error.
func (c *Client) CancelTask(ctx context.Context, id, reason, cancelledBy string) (*wfdv1.Task, error) {
	req := &wfdv1.CancelTaskRequest{TaskId: id, Reason: reason, CancelledBy: cancelledBy}
	res, err := c.svc.CancelTask(ctx, req)
	if err == nil {
		return res.GetTask(), nil
	}
	if status.Code(err) != codes.FailedPrecondition {
		return nil, err
	}
	t, gerr := c.Task(ctx, id)
	if gerr == nil && t.GetStatus() == wfdv1.TaskStatus_TASK_STATUS_CANCELLED && t.GetCancelReason() == reason && t.GetCompletedBy() == cancelledBy {
		return t, nil
	}
	return nil, err
}

// sameAnswer says whether t was completed as req asks.
func sameAnswer(t *wfdv1.Task, req *wfdv1.CompleteTaskRequest) bool {
	if t.GetStatus() != wfdv1.TaskStatus_TASK_STATUS_COMPLETED || t.GetCompletedBy() != req.GetCompletedBy() {
		return false
	}
	// The server takes a missing answer as an empty one.
	got, want := t.GetAnswer(), req.GetAnswer()
	if got == nil {
		got = &structpb.Struct{}
	}
	if want == nil {
		want = &structpb.Struct{}
	}
	return proto.Equal(got, want)
}
