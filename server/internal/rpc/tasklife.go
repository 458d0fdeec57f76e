package rpc

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// maxCommentBytes bounds CommentTaskRequest.text.
const maxCommentBytes = 4096

// ClaimTask makes a pending task the caller's to work on (engine.TaskUpdate).
func (v *Service) ClaimTask(ctx context.Context, req *wfdv1.ClaimTaskRequest) (*wfdv1.ClaimTaskResponse, error) {
	t, err := v.updateTask(ctx, req.GetTaskId(), req.GetBy(), engine.TaskUpdate{Action: engine.TaskClaim})
	if err != nil {
		return nil, err
	}
	return &wfdv1.ClaimTaskResponse{Task: taskToProto(&t)}, nil
}

// UnclaimTask lets a claimed task go.
func (v *Service) UnclaimTask(ctx context.Context, req *wfdv1.UnclaimTaskRequest) (*wfdv1.UnclaimTaskResponse, error) {
	t, err := v.updateTask(ctx, req.GetTaskId(), req.GetBy(), engine.TaskUpdate{Action: engine.TaskUnclaim})
	if err != nil {
		return nil, err
	}
	return &wfdv1.UnclaimTaskResponse{Task: taskToProto(&t)}, nil
}

// ReassignTask gives a pending task to another person or group.
func (v *Service) ReassignTask(ctx context.Context, req *wfdv1.ReassignTaskRequest) (*wfdv1.ReassignTaskResponse, error) {
	if err := checkName("assignee", req.GetAssignee()); err != nil {
		return nil, err
	}
	t, err := v.updateTask(ctx, req.GetTaskId(), req.GetBy(), engine.TaskUpdate{Action: engine.TaskReassign, To: req.GetAssignee()})
	if err != nil {
		return nil, err
	}
	return &wfdv1.ReassignTaskResponse{Task: taskToProto(&t)}, nil
}

// CommentTask adds a comment to a pending task.
func (v *Service) CommentTask(ctx context.Context, req *wfdv1.CommentTaskRequest) (*wfdv1.CommentTaskResponse, error) {
	if n := len(req.GetText()); n == 0 || n > maxCommentBytes || !utf8.ValidString(req.GetText()) {
		return nil, fmt.Errorf("%w: text: want 1 to %d bytes of UTF-8, got %d", apierr.ErrInvalid, maxCommentBytes, n)
	}
	if id := req.GetCommentId(); id != "" {
		if err := checkName("comment_id", id); err != nil {
			return nil, err
		}
		if len(id) > maxHandlerIDLen {
			return nil, fmt.Errorf("%w: comment_id is longer than %d bytes", apierr.ErrInvalid, maxHandlerIDLen)
		}
	}
	t, err := v.updateTask(ctx, req.GetTaskId(), req.GetBy(), engine.TaskUpdate{Action: engine.TaskComment, Text: req.GetText(), CommentID: req.GetCommentId()})
	if err != nil {
		return nil, err
	}
	return &wfdv1.CommentTaskResponse{Task: taskToProto(&t)}, nil
}

// updateTask sends u (its action and arguments set) for pending task id
// to its handler in the name of by, and returns the task as the journal
// recorded it. With authentication, by is the caller's subject, who must
// be one who may answer the task (its assignee, in its group) or answer
// others' (operator, admin: they may also act on a task someone else
// holds). Without it, by is required; anyone may let go of or hand on a
// task someone holds, but not claim or answer it.
func (s *Service) updateTask(ctx context.Context, id, by string, u engine.TaskUpdate) (persistence.Task, error) {
	if err := checkTaskID(id); err != nil {
		return persistence.Task{}, err
	}
	// Calls on one task take turns, so the second sees the first's result.
	unlock := s.rt.Turns().Lock("task:" + id)
	defer unlock()
	t, err := s.task(ctx, id)
	if err != nil {
		return t, err
	}
	if t.Status != persistence.TaskPending {
		return t, fmt.Errorf("%w: task %q is %v", apierr.ErrFailedPrecondition, id, t.Status)
	}
	if u.By, u.Override, err = taskActor(ctx, by, &t, u.Action); err != nil {
		return t, err
	}
	u.TaskID, u.At = id, s.now()
	err = s.rt.WithLive(ctx, t.HandlerID, func(h *engine.Handler) error {
		return h.SendEvent(ctx, u.Event(), engine.SendOptions{FromWfd: true})
	})
	if errors.Is(err, engine.ErrHandlerDone) {
		err = fmt.Errorf("%w: task %q: its handler has ended", apierr.ErrFailedPrecondition, id)
	}
	if err != nil {
		return t, err
	}
	return s.task(ctx, id)
}

// taskActor decides who acts on task t, and whether they may act on it
// while someone else holds it (see updateTask).
func taskActor(ctx context.Context, by string, t *persistence.Task, action engine.TaskAction) (who string, override bool, err error) {
	id, ok := auth.FromContext(ctx)
	if !ok {
		if by == "" {
			return "", false, fmt.Errorf("%w: by is required (who acts on the task)", apierr.ErrInvalid)
		}
		if err := checkName("by", by); err != nil {
			return "", false, err
		}
		return by, action == engine.TaskUnclaim || action == engine.TaskReassign, nil
	}
	override = auth.MayOverrideAssignee(id)
	if !assignedTo(id, t.Assignee) && !override {
		return "", false, fmt.Errorf("%w: task %q is assigned to %q, not to %s", apierr.ErrPermissionDenied, t.ID, t.Assignee, id.Subject)
	}
	return id.Subject, override, nil
}

// answerOverride reports whether the caller may answer or cancel a task
// someone else holds.
func answerOverride(ctx context.Context) bool {
	id, ok := auth.FromContext(ctx)
	return ok && auth.MayOverrideAssignee(id)
}
