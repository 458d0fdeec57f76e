package live

import (
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/payload"
	"github.com/wfd-dev/wfd/persistence"
)

// TasksFromChange derives the task records a change creates or ends: a new
// task waiter is a pending task, a resolved one completed (by its answer
// event) or expired (by its deadline), a dropped one cancelled; a pending one a
// TaskUpdate changed is rewritten as it stands. They commit
// with the handler's change, so the inbox never disagrees with the handler.
func TasksFromChange(c *engine.Change) ([]persistence.Task, error) {
	var out []persistence.Task
	for i := range c.NewWaiters {
		if w := &c.NewWaiters[i]; w.Task != nil {
			t, err := taskOf(c, w, persistence.TaskPending)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	for i := range c.Resolved {
		if r := &c.Resolved[i]; r.Waiter.Task != nil {
			t, err := resolvedTask(c, r)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	for i := range c.ChangedTasks {
		if w := &c.ChangedTasks[i]; w.Task != nil {
			t, err := taskOf(c, w, persistence.TaskPending)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	for i := range c.Dropped {
		if w := &c.Dropped[i]; w.Task != nil {
			t, err := taskOf(c, w, persistence.TaskCancelled)
			if err != nil {
				return nil, err
			}
			t.CompletedAt = c.UpdatedAt
			out = append(out, t)
		}
	}
	return out, nil
}

// taskOf is the task record of task waiter w of the change's handler,
// with status st.
func taskOf(c *engine.Change, w *engine.WaiterInfo, st persistence.TaskStatus) (persistence.Task, error) {
	t := persistence.Task{
		ID: w.Task.ID, HandlerID: c.HandlerID, Workflow: c.Workflow, Step: w.Step, Title: w.Task.Title,
		Description: w.Task.Description, Assignee: w.Task.Assignee, Status: st, Deadline: w.Deadline, CreatedAt: w.Created,
	}
	if e := w.Task.Escalation; e != nil {
		t.Due = w.Created.Add(e.After)
	}
	if l := w.Life; l != nil {
		t.ClaimedBy, t.ClaimedAt, t.Escalated = l.ClaimedBy, l.ClaimedAt, l.Escalated
		for _, n := range l.Comments {
			t.Comments = append(t.Comments, persistence.TaskComment{ID: n.ID, By: n.By, At: n.At, Text: n.Text})
		}
	}
	var err error
	if t.Schema, err = taskJSON(w.Task.Schema); err != nil {
		return t, err
	}
	if t.Input, err = taskJSON(w.Task.Input); err != nil {
		return t, err
	}
	if t.InputSchema, err = taskJSON(w.Task.InputSchema); err != nil {
		return t, err
	}
	return t, nil
}

// taskJSON is a task's Struct as the store keeps it (nil for none),
// sanitized, so a payload JSON cannot hold fails no checkpoint (the engine
// refuses such payloads; this is the last guard).
func taskJSON(s *structpb.Struct) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	return protojson.Marshal(payload.Sanitize(s))
}

// resolvedTask is the record of a task whose wait resolved: completed by
// its answer event (who, when and what it carries), cancelled by one
// (CancelTask: who, when and why), or expired.
func resolvedTask(c *engine.Change, r *engine.Resolution) (persistence.Task, error) {
	st := persistence.TaskExpired
	cancelled := !r.TimedOut && r.Event.Data.GetFields()["cancelled"].GetBoolValue()
	switch {
	case cancelled:
		st = persistence.TaskCancelled
	case !r.TimedOut:
		st = persistence.TaskCompleted
	}
	t, err := taskOf(c, &r.Waiter, st)
	if err != nil {
		return t, err
	}
	t.CompletedAt = c.UpdatedAt
	if r.TimedOut {
		return t, nil
	}
	f := r.Event.Data.GetFields()
	t.CompletedBy = f["completed_by"].GetStringValue()
	if at, err := time.Parse(time.RFC3339Nano, f["completed_at"].GetStringValue()); err == nil {
		t.CompletedAt = at
	}
	if cancelled {
		t.CancelReason = f["reason"].GetStringValue()
		return t, nil
	}
	if a := f["answer"].GetStructValue(); a != nil {
		if t.Answer, err = protojson.Marshal(payload.Sanitize(a)); err != nil {
			return t, err
		}
	}
	return t, nil
}
