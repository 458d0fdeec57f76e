package engine

// The life of a pending human task besides its answer: who holds it
// (claim, unclaim), whom it is assigned to (reassign) and what people
// noted on it (comments). Each change is an event only wfd sends
// (TaskUpdateEvent); the handler's loop checks it against the task as it
// stands (so two claims race in one place), applies it to the task's
// waiter, and records it on the stream (RecordTask), in the commit that
// rewrites the task (Change.ChangedTasks).

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/flow"
	statev1 "github.com/wfd-dev/wfd/internal/gen/wfd/state/v1"
	"github.com/wfd-dev/wfd/internal/names"
)

// TaskUpdateEvent is the type of the event that changes a pending task
// (TaskUpdate). Only wfd sends it; it starts no step.
const TaskUpdateEvent = "wfd.task_update"

// MaxTaskComments bounds a task's comments.
const MaxTaskComments = 100

// TaskAction is what a TaskUpdate does.
type TaskAction string

// The task actions.
const (
	TaskClaim    TaskAction = "claim"
	TaskUnclaim  TaskAction = "unclaim"
	TaskReassign TaskAction = "reassign"
	TaskComment  TaskAction = "comment"
)

// TaskUpdate is one change to a pending task: By does Action at At; To is
// a reassignment's new assignee, Text a comment's and CommentID its id (a
// comment whose id the task has already is not added again). Override lets By act on
// a task someone else holds (the server sets it for those who may answer
// others' tasks).
type TaskUpdate struct {
	TaskID    string
	Action    TaskAction
	By, To    string
	Text      string
	CommentID string
	At        time.Time
	Override  bool
}

// Event is the TaskUpdateEvent that carries u.
func (u TaskUpdate) Event() Event {
	f := map[string]*structpb.Value{
		"task_id":  structpb.NewStringValue(u.TaskID),
		"action":   structpb.NewStringValue(string(u.Action)),
		"by":       structpb.NewStringValue(u.By),
		"at":       structpb.NewStringValue(u.At.UTC().Format(time.RFC3339Nano)),
		"override": structpb.NewBoolValue(u.Override),
	}
	if u.To != "" {
		f["to"] = structpb.NewStringValue(u.To)
	}
	if u.Text != "" {
		f["text"] = structpb.NewStringValue(u.Text)
	}
	if u.CommentID != "" {
		f["comment_id"] = structpb.NewStringValue(u.CommentID)
	}
	return Event{Type: TaskUpdateEvent, Data: &structpb.Struct{Fields: f}}
}

func taskUpdateOf(ev Event) TaskUpdate {
	f := ev.Data.GetFields()
	at, _ := time.Parse(time.RFC3339Nano, f["at"].GetStringValue())
	return TaskUpdate{TaskID: f["task_id"].GetStringValue(), Action: TaskAction(f["action"].GetStringValue()), By: f["by"].GetStringValue(),
		To: f["to"].GetStringValue(), Text: f["text"].GetStringValue(), CommentID: f["comment_id"].GetStringValue(), At: at,
		Override: f["override"].GetBoolValue()}
}

// TaskLife is what happened to a pending task since it was asked: who
// holds it and the comments on it. (Its assignee is Task.Assignee, which
// a reassignment changes.)
type TaskLife struct {
	ClaimedBy string
	ClaimedAt time.Time
	Comments  []TaskNote
	// Escalated: the task's escalation acted (tasklife.go, escalate).
	Escalated bool
}

// TaskNote is a comment on a task; ID is its CommentID ("": none).
type TaskNote struct {
	ID   string
	By   string
	At   time.Time
	Text string
}

// hasComment reports whether the task has a comment with id ("": never).
func (l *TaskLife) hasComment(id string) bool {
	return l != nil && id != "" && slices.ContainsFunc(l.Comments, func(n TaskNote) bool { return n.ID == id })
}

// ErrTaskNotPending: the task a TaskUpdate names is not pending in the
// handler (answered, expired, cancelled, or never asked).
var ErrTaskNotPending = errors.New("the task is not pending")

// TaskHeldError refuses a TaskUpdate on a task someone else holds.
type TaskHeldError struct {
	TaskID, ClaimedBy string
	Action            TaskAction
}

func (e *TaskHeldError) Error() string {
	return fmt.Sprintf("task %q is claimed by %s: only they may %s it (or someone who may answer others' tasks)", e.TaskID, e.ClaimedBy, e.Action)
}

// taskWaiter returns the waiter of pending task id (nil: none).
func (s *state) taskWaiter(id string) *waiter {
	for i := range s.steps {
		for _, w := range s.steps[i].waiters {
			if w.on != nil && w.on.task != nil && w.on.task.ID == id {
				return w
			}
		}
	}
	return nil
}

// checkTaskUpdate reports whether the handler takes u now.
func (s *state) checkTaskUpdate(u TaskUpdate) error {
	w := s.taskWaiter(u.TaskID)
	if w == nil {
		return fmt.Errorf("%w: task %q of handler %s", ErrTaskNotPending, u.TaskID, s.id)
	}
	life := w.on.life
	held := life != nil && life.ClaimedBy != "" && life.ClaimedBy != u.By && !u.Override
	switch u.Action {
	case TaskClaim, TaskUnclaim, TaskReassign:
		if held {
			return &TaskHeldError{TaskID: u.TaskID, ClaimedBy: life.ClaimedBy, Action: u.Action}
		}
	case TaskComment:
		if life != nil && len(life.Comments) >= MaxTaskComments && !life.hasComment(u.CommentID) {
			return fmt.Errorf("%w: task %q has %d comments, the most it may have", ErrLimit, u.TaskID, MaxTaskComments)
		}
	default:
		return fmt.Errorf("%w: task update %q", ErrInvalidEvent, u.Action)
	}
	return nil
}

// applyTaskUpdate changes the task as ev says (checkTaskUpdate passed),
// records the change and marks the task for the change's commit. What
// changes nothing (a claim by its holder, an unclaim of a task nobody
// holds) records nothing.
func (r *runner) applyTaskUpdate(ev Event) {
	u := taskUpdateOf(ev)
	w := r.s.taskWaiter(u.TaskID)
	if w == nil {
		return
	}
	t, life := w.on.task, w.on.lifeMut()
	c := &TaskChange{TaskID: t.ID, Title: t.Title, Assignee: t.Assignee, By: u.By}
	switch u.Action {
	case TaskClaim:
		if life.ClaimedBy == u.By {
			return
		}
		life.ClaimedBy, life.ClaimedAt, c.Change = u.By, u.At, TaskClaimed
	case TaskUnclaim:
		if life.ClaimedBy == "" {
			return
		}
		life.ClaimedBy, life.ClaimedAt, c.Change = "", time.Time{}, TaskUnclaimed
	case TaskReassign:
		w.on.reassign(u.To)
		c.Change, c.To = TaskReassigned, u.To
	case TaskComment:
		if life.hasComment(u.CommentID) {
			return // a retry of a comment the task has
		}
		life.Comments = append(slices.Clip(life.Comments), TaskNote{ID: u.CommentID, By: u.By, At: u.At, Text: u.Text})
		c.Change, c.Text = TaskCommented, u.Text
	}
	r.taskChanged(w, c)
}

// taskChanged records change c of w's task and marks the task for the
// change's commit (Change.ChangedTasks).
func (r *runner) taskChanged(w *waiter, c *TaskChange) {
	r.record(Record{Kind: RecordTask, Task: c})
	r.changedTasks = append(r.changedTasks, w.info(r.wf.def.Steps))
}

// lifeMut returns the task's life, made if it had none.
func (on *waitOn) lifeMut() *TaskLife {
	if on.life == nil {
		on.life = &TaskLife{}
	}
	return on.life
}

// reassign gives the task to assignee and ends its claim. The task is
// copied: the one the step asked with stays as it was.
func (on *waitOn) reassign(assignee string) {
	nt := *on.task
	nt.Assignee = assignee
	on.task = &nt
	life := on.lifeMut()
	life.ClaimedBy, life.ClaimedAt = "", time.Time{}
}

func lifeToProto(l *TaskLife, p *statev1.HumanTask) {
	if l == nil || p == nil {
		return
	}
	p.ClaimedBy = l.ClaimedBy
	if !l.ClaimedAt.IsZero() {
		p.ClaimedAt = l.ClaimedAt.UnixNano()
	}
	for _, n := range l.Comments {
		p.Comments = append(p.Comments, &statev1.TaskNote{Id: n.ID, By: n.By, At: n.At.UnixNano(), Text: n.Text})
	}
	p.Escalated = l.Escalated
}

func lifeFromProto(p *statev1.HumanTask) *TaskLife {
	if p.GetClaimedBy() == "" && len(p.GetComments()) == 0 && !p.GetEscalated() {
		return nil
	}
	l := &TaskLife{ClaimedBy: p.GetClaimedBy(), Escalated: p.GetEscalated()}
	if p.GetClaimedAt() != 0 {
		l.ClaimedAt = time.Unix(0, p.GetClaimedAt()).UTC()
	}
	for _, n := range p.GetComments() {
		l.Comments = append(l.Comments, TaskNote{ID: n.GetId(), By: n.GetBy(), At: time.Unix(0, n.GetAt()).UTC(), Text: n.GetText()})
	}
	return l
}

// clone copies l, so a Change keeps the task as it was when made.
func (l *TaskLife) clone() *TaskLife {
	if l == nil {
		return nil
	}
	c := *l
	c.Comments = slices.Clone(l.Comments)
	return &c
}

// checkTaskAnswer refuses the answer or cancellation of a task someone
// other than its sender holds, unless the sender may override (the
// event's "override"). A task not pending is left to the wait's matching.
func (s *state) checkTaskAnswer(ev Event) error {
	f := ev.Data.GetFields()
	w := s.taskWaiter(f["task_id"].GetStringValue())
	if w == nil || w.on.life == nil || w.on.life.ClaimedBy == "" || f["override"].GetBoolValue() {
		return nil
	}
	if by := f["completed_by"].GetStringValue(); by != w.on.life.ClaimedBy {
		action := TaskAction("answer")
		if f["cancelled"].GetBoolValue() {
			action = "cancel"
		}
		return &TaskHeldError{TaskID: w.on.task.ID, ClaimedBy: w.on.life.ClaimedBy, Action: action}
	}
	return nil
}

// Escalation is a task's escalation (flow.Escalation).
type Escalation = flow.Escalation

// checkEscalation refuses an escalation that could never act (no After,
// or not before the task's deadline) or names what names may not be.
func checkEscalation(e *Escalation, deadline time.Duration) error {
	switch {
	case e.After <= 0:
		return errors.New("its escalation needs a positive After")
	case deadline > 0 && e.After >= deadline:
		return fmt.Errorf("its escalation after %v would come once its deadline (%v) has ended it", e.After, deadline)
	case e.Reassign == "" && e.Notify == "":
		return errors.New("its escalation neither reassigns it nor notifies anyone")
	}
	if err := names.Check("the escalation's assignee", e.Reassign, names.MaxNameBytes, false); err != nil {
		return err
	}
	return names.Check("the escalation's key", e.Notify, names.MaxNameBytes, false)
}

// escalateAt is when w's task escalates (zero: never, or it did).
func (w *waiter) escalateAt() time.Time {
	if w.on == nil || w.on.task == nil || w.on.task.Escalation == nil || (w.on.life != nil && w.on.life.Escalated) {
		return time.Time{}
	}
	return w.created.Add(w.on.task.Escalation.After)
}

// escalateDue escalates every task whose time has come: it is reassigned
// if its escalation says so (its claim ends), the change is recorded
// (TaskEscalated, naming the new assignee and the key to notify, which
// the server publishes in the same commit) and the task rewritten.
func (r *runner) escalateDue() {
	for i := range r.s.steps {
		for _, w := range r.s.steps[i].waiters {
			at := w.escalateAt()
			if at.IsZero() || at.After(r.now) {
				continue
			}
			t, e := w.on.task, w.on.task.Escalation
			w.on.lifeMut().Escalated = true
			c := &TaskChange{TaskID: t.ID, Title: t.Title, Assignee: t.Assignee, Change: TaskEscalated, Text: e.Notify}
			if e.Reassign != "" && e.Reassign != t.Assignee {
				w.on.reassign(e.Reassign)
				c.To = e.Reassign
			}
			r.taskChanged(w, c)
		}
	}
}
