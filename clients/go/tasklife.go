package client

import (
	"context"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// In ClaimTask, UnclaimTask, ReassignTask and CommentTask, by is who acts:
// required without authentication, ignored with it (the server records
// the caller's subject). Each returns the task as it stands after the
// change; a task that is not pending is codes.FailedPrecondition.

// ClaimTask makes a pending task by's to work on: only they may answer it
// (or someone who may answer others' tasks). Claiming a task one holds
// changes nothing, so a retry is safe; a task someone else holds is
// codes.FailedPrecondition naming them.
func (c *Client) ClaimTask(ctx context.Context, id, by string) (*wfdv1.Task, error) {
	res, err := c.svc.ClaimTask(ctx, &wfdv1.ClaimTaskRequest{TaskId: id, By: by})
	return res.GetTask(), err
}

// UnclaimTask lets go of a claimed task; an unclaimed one changes nothing.
func (c *Client) UnclaimTask(ctx context.Context, id, by string) (*wfdv1.Task, error) {
	res, err := c.svc.UnclaimTask(ctx, &wfdv1.UnclaimTaskRequest{TaskId: id, By: by})
	return res.GetTask(), err
}

// ReassignTask gives a pending task to assignee (a person, or a group as
// "group:<role>") and ends its claim.
func (c *Client) ReassignTask(ctx context.Context, id, assignee, by string) (*wfdv1.Task, error) {
	res, err := c.svc.ReassignTask(ctx, &wfdv1.ReassignTaskRequest{TaskId: id, Assignee: assignee, By: by})
	return res.GetTask(), err
}

// CommentTask adds a comment (1 to 4096 bytes) to a pending task; a task
// holds at most 100 (then codes.ResourceExhausted). The comment gets an
// id (a UUIDv7), so a retry after a lost response adds it once.
func (c *Client) CommentTask(ctx context.Context, id, text, by string) (*wfdv1.Task, error) {
	var commentID string
	if err := defaultID(&commentID, "comment id"); err != nil {
		return nil, err
	}
	res, err := c.svc.CommentTask(ctx, &wfdv1.CommentTaskRequest{TaskId: id, Text: text, By: by, CommentId: commentID})
	return res.GetTask(), err
}
