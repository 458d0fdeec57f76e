package rpc

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wfd-dev/wfd/flow"
	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/schema"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

func taskToProto(t *persistence.Task) *wfdv1.Task {
	p := &wfdv1.Task{
		TaskId: t.ID, HandlerId: t.HandlerID, Workflow: t.Workflow, Step: t.Step, Title: t.Title, Description: t.Description,
		Assignee: t.Assignee, Status: wfdv1.TaskStatus(t.Status), CompletedBy: t.CompletedBy, CreatedAt: timestamppb.New(t.CreatedAt),
	}
	if !t.Deadline.IsZero() {
		p.Deadline = timestamppb.New(t.Deadline)
	}
	if !t.CompletedAt.IsZero() {
		p.CompletedAt = timestamppb.New(t.CompletedAt)
	}
	p.AnswerSchema, p.Answer = jsonStruct(t.Schema), jsonStruct(t.Answer)
	p.Input, p.InputSchema = jsonStruct(t.Input), jsonStruct(t.InputSchema)
	p.CancelReason = t.CancelReason
	p.ClaimedBy, p.Escalated = t.ClaimedBy, t.Escalated
	if !t.Due.IsZero() {
		p.Due = timestamppb.New(t.Due)
	}
	if !t.ClaimedAt.IsZero() {
		p.ClaimedAt = timestamppb.New(t.ClaimedAt)
	}
	for _, c := range t.Comments {
		p.Comments = append(p.Comments, &wfdv1.TaskComment{By: c.By, At: timestamppb.New(c.At), Text: c.Text, CommentId: c.ID})
	}
	return p
}

func (v *Service) ListTasks(ctx context.Context, req *wfdv1.ListTasksRequest) (*wfdv1.ListTasksResponse, error) {
	if err := validateListTasks(req); err != nil {
		return nil, err
	}
	q := persistence.TaskQuery{Assignee: req.GetAssignee(), Workflow: req.GetWorkflow(), HandlerID: req.GetHandlerId(),
		Claim: persistence.ClaimFilter(req.GetClaim()), Overdue: req.GetOverdue(), Now: v.now(),
		PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken()}
	if req.GetMine() {
		id, ok := auth.FromContext(ctx)
		if !ok {
			return nil, fmt.Errorf("%w: mine needs an authenticated caller (the server runs without authentication)", apierr.ErrFailedPrecondition)
		}
		q.Assignees = myAssignees(id)
	}
	for _, s := range req.GetStatuses() {
		q.Statuses = append(q.Statuses, persistence.TaskStatus(s))
	}
	ts, next, err := v.store.ListTasks(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &wfdv1.ListTasksResponse{NextPageToken: next, Tasks: make([]*wfdv1.Task, len(ts))}
	for i := range ts {
		out.Tasks[i] = taskToProto(&ts[i])
	}
	return out, nil
}

func (v *Service) GetTask(ctx context.Context, req *wfdv1.GetTaskRequest) (*wfdv1.GetTaskResponse, error) {
	if err := checkTaskID(req.GetTaskId()); err != nil {
		return nil, err
	}
	t, err := v.task(ctx, req.GetTaskId())
	if err != nil {
		return nil, err
	}
	return &wfdv1.GetTaskResponse{Task: taskToProto(&t)}, nil
}

func (s *Service) task(ctx context.Context, id string) (persistence.Task, error) {
	t, err := s.store.GetTask(ctx, id)
	if errors.Is(err, persistence.ErrNotFound) {
		return t, fmt.Errorf("task %q %w", id, apierr.ErrNotFound)
	}
	return t, err
}

// CompleteTask checks the answer against the task's schema, then delivers
// it to the handler as a TaskEvent; the journal marks the task completed
// in the same commit that records the handler taking the answer.
func (v *Service) CompleteTask(ctx context.Context, req *wfdv1.CompleteTaskRequest) (*wfdv1.CompleteTaskResponse, error) {
	t, err := v.completeTask(ctx, req)
	if err != nil {
		return nil, err
	}
	return &wfdv1.CompleteTaskResponse{Task: taskToProto(&t)}, nil
}

func (s *Service) completeTask(ctx context.Context, req *wfdv1.CompleteTaskRequest) (persistence.Task, error) {
	if err := validateCompleteTask(req, s.payloadLimits()); err != nil {
		return persistence.Task{}, err
	}
	answer := req.GetAnswer()
	if answer == nil {
		answer = &structpb.Struct{}
	}
	return s.resolveTask(ctx, req.GetTaskId(), req.GetCompletedBy(), persistence.TaskCompleted, func(t *persistence.Task) (flow.TaskAnswer, error) {
		return flow.TaskAnswer{Data: answer}, checkAnswer(t.Schema, answer)
	})
}

// CancelTask delivers a cancellation with its reason to the handler as a
// TaskEvent: the waiting step gets it as its typed answer; the journal
// marks the task cancelled in the same commit.
func (v *Service) CancelTask(ctx context.Context, req *wfdv1.CancelTaskRequest) (*wfdv1.CancelTaskResponse, error) {
	if err := validateCancelTask(req); err != nil {
		return nil, err
	}
	t, err := v.resolveTask(ctx, req.GetTaskId(), req.GetCancelledBy(), persistence.TaskCancelled, func(*persistence.Task) (flow.TaskAnswer, error) {
		return flow.TaskAnswer{Cancelled: true, Reason: req.GetReason()}, nil
	})
	if err != nil {
		return nil, err
	}
	return &wfdv1.CancelTaskResponse{Task: taskToProto(&t)}, nil
}

// resolveTask ends pending task id as want (completed or cancelled): it
// delivers a TaskEvent of the answer or cancellation resolution makes (once
// the task is read) to its handler, in the name of by (the caller's subject with authentication),
// and returns the task as the journal recorded it.
func (s *Service) resolveTask(ctx context.Context, id, by string, want persistence.TaskStatus,
	resolution func(*persistence.Task) (flow.TaskAnswer, error),
) (persistence.Task, error) {
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
	who, err := answerer(ctx, by, &t)
	if err != nil {
		return t, err
	}
	a, err := resolution(&t)
	if err != nil {
		return t, err
	}
	a.CompletedBy, a.CompletedAt = who, s.now()
	ev := engine.Event{Type: engine.TaskEvent, Data: flow.TaskEventData(id, a)}
	// The handler refuses it if someone else holds the task, unless the
	// caller may answer others' tasks.
	ev.Data.Fields["override"] = structpb.NewBoolValue(answerOverride(ctx))
	err = s.rt.WithLive(ctx, t.HandlerID, func(h *engine.Handler) error { return h.SendEvent(ctx, ev, engine.SendOptions{FromWfd: true}) })
	if err != nil && !errors.Is(err, engine.ErrHandlerDone) && !errors.Is(err, engine.ErrInvalidEvent) {
		return t, err
	}
	if t, err = s.task(ctx, id); err != nil {
		return t, err
	}
	if t.Status != want {
		// The deadline passed, or the handler ended, or another call
		// resolved it first.
		return t, fmt.Errorf("%w: task %q is %v", apierr.ErrFailedPrecondition, id, t.Status)
	}
	return t, nil
}

// checkAnswer validates an answer against a JSON Schema (JSON bytes; none
// accepts any object). The error names the failing fields.
func checkAnswer(raw []byte, answer *structpb.Struct) error {
	if len(raw) == 0 {
		return nil
	}
	sch, err := schema.Compile(raw)
	if err != nil {
		return fmt.Errorf("%w: the task's schema %w", apierr.ErrFailedPrecondition, err)
	}
	if err := sch.Validate(answer); err != nil {
		return fmt.Errorf("%w: the answer does not match the task's schema: %w", apierr.ErrInvalid, err)
	}
	return nil
}

// jsonStruct is stored JSON as a Struct (nil for none or unreadable).
func jsonStruct(b []byte) *structpb.Struct {
	if len(b) == 0 {
		return nil
	}
	var s structpb.Struct
	if protojson.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}
