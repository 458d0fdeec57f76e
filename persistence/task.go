package persistence

import (
	"fmt"
	"time"
)

// TaskStatus is where a human task is in its life. The zero value is
// unspecified and never stored.
type TaskStatus int

// Task statuses. Completed, expired and cancelled are terminal.
const (
	// TaskPending: the task waits for a person to answer it.
	TaskPending TaskStatus = iota + 1
	// TaskCompleted: someone answered it (Task.Answer, CompletedBy).
	TaskCompleted
	// TaskExpired: its deadline passed before anyone answered.
	TaskExpired
	// TaskCancelled: the handler no longer needs the answer.
	TaskCancelled
)

// TaskStatuses lists every valid task status, in numeric order.
func TaskStatuses() []TaskStatus {
	return []TaskStatus{TaskPending, TaskCompleted, TaskExpired, TaskCancelled}
}

// Valid reports whether s is one of the defined task statuses.
func (s TaskStatus) Valid() bool { return s >= TaskPending && s <= TaskCancelled }

// Terminal reports whether a task with status s is closed.
func (s TaskStatus) Terminal() bool { return s >= TaskCompleted && s <= TaskCancelled }

func (s TaskStatus) String() string {
	switch s {
	case TaskPending:
		return "pending"
	case TaskCompleted:
		return "completed"
	case TaskExpired:
		return "expired"
	case TaskCancelled:
		return "cancelled"
	default:
		return fmt.Sprintf("TaskStatus(%d)", int(s))
	}
}

// Task is one human task of the inbox: a handler waits for a person to
// answer a question. Tasks are written with the handler that owns them
// (Change.Tasks), listed with Store.ListTasks and deleted with their handler.
//
// Times are stored with nanosecond precision and returned in UTC.
type Task struct {
	// ID identifies the task across the store, e.g. "<handler id>:<waiter
	// id>". It may contain any byte but NUL, up to MaxTaskIDLen bytes.
	ID string
	// HandlerID is the handler the task belongs to. A task never moves to
	// another handler.
	HandlerID string
	Workflow  string
	Step      string

	Title       string
	Description string
	// Schema is the JSON Schema of the answer, as JSON bytes; the store
	// does not look at it.
	Schema []byte

	// Assignee is who should answer; "" means unassigned.
	Assignee string
	Status   TaskStatus

	// CreatedAt orders listings (newest first).
	CreatedAt time.Time
	Deadline  time.Time // zero: no deadline

	CompletedAt time.Time // zero until the task is completed
	CompletedBy string
	Answer      []byte // opaque (JSON)
	// CancelReason is why CancelTask cancelled the task (CompletedBy
	// says who); "" otherwise.
	CancelReason string

	// Input is what the person is to look at, and InputSchema its
	// optional schema, as JSON; the store does not look at them.
	Input       []byte
	InputSchema []byte

	// ClaimedBy holds the task to work on it (since ClaimedAt); "" when
	// nobody does.
	ClaimedBy string
	ClaimedAt time.Time
	// Comments are what people noted on the task, oldest first.
	Comments []TaskComment
	// Due is when the task escalates (zero: never); pending past it, it is
	// overdue. Escalated says its escalation acted.
	Due       time.Time
	Escalated bool
}

// TaskComment is a comment on a task; ID is the one its author gave ("":
// none).
type TaskComment struct {
	ID   string
	By   string
	At   time.Time
	Text string
}

// Validate reports whether t may be stored. The error wraps ErrInvalid.
func (t *Task) Validate() error {
	if err := checkName("task id", t.ID, MaxTaskIDLen, true); err != nil {
		return err
	}
	if err := checkName("task handler id", t.HandlerID, MaxIDLen, true); err != nil {
		return fmt.Errorf("task %q: %w", t.ID, err)
	}
	if err := checkName("task workflow", t.Workflow, MaxWorkflowLen, true); err != nil {
		return fmt.Errorf("task %q: %w", t.ID, err)
	}
	if err := checkName("assignee", t.Assignee, MaxAssigneeLen, false); err != nil {
		return fmt.Errorf("task %q: %w", t.ID, err)
	}
	if !t.Status.Valid() {
		return fmt.Errorf("%w: task %q: invalid status %v", ErrInvalid, t.ID, t.Status)
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"CreatedAt", t.CreatedAt}, {"Deadline", t.Deadline}, {"CompletedAt", t.CompletedAt}, {"ClaimedAt", t.ClaimedAt}, {"Due", t.Due}} {
		if err := checkTime(f.name, f.t); err != nil {
			return fmt.Errorf("task %q: %w", t.ID, err)
		}
	}
	return nil
}

// TaskQuery selects tasks for Store.ListTasks. Filters combine with AND;
// the zero TaskQuery lists every task. Results are newest first: by
// CreatedAt descending, tasks created at the same instant by ID descending.
type TaskQuery struct {
	// Statuses, if not empty, keeps tasks in any of these statuses.
	Statuses []TaskStatus
	// Assignee, if not "", keeps tasks assigned to that person. (There is
	// no filter for unassigned tasks: "" means any assignee.)
	Assignee string
	// Assignees, if not empty, keeps tasks assigned to any of them (a
	// person and their groups: "my tasks"). Not together with Assignee.
	Assignees []string
	// Workflow, if not "", keeps tasks of that workflow.
	Workflow string
	// HandlerID, if not "", keeps the tasks of that handler.
	HandlerID string
	// Claim, if not ClaimAny, keeps tasks someone holds (ClaimHeld) or
	// nobody does (ClaimFree).
	Claim ClaimFilter
	// Overdue keeps pending tasks whose Due is before Now (zero: the
	// current time).
	Overdue bool
	Now     time.Time
	// PageSize is the maximum number of tasks returned: 0 means
	// DefaultPageSize, and values above MaxPageSize are lowered to it.
	// With Claim or Overdue, which no index answers, a page may hold
	// fewer (see MaxTaskFilterScan).
	PageSize int
	// PageToken continues a previous listing with the same filters; ""
	// starts from the newest task.
	PageToken string
}

// ClaimFilter is TaskQuery.Claim.
type ClaimFilter uint8

// Claim filters.
const (
	ClaimAny ClaimFilter = iota
	ClaimHeld
	ClaimFree
)

// MaxTaskFilterScan bounds the tasks a listing with Claim or Overdue reads
// for one page: the filters are applied to what the other filters' index
// lists (pending tasks, by assignee), so a page ends early, with a token
// to go on, rather than read without bound.
const MaxTaskFilterScan = 10 * MaxPageSize

// PostFiltered reports whether q filters on what no index answers.
func (q *TaskQuery) PostFiltered() bool { return q.Claim != ClaimAny || q.Overdue }

// Keeps reports whether t passes q's Claim and Overdue filters.
func (q *TaskQuery) Keeps(t *Task) bool {
	switch q.Claim {
	case ClaimHeld:
		if t.ClaimedBy == "" {
			return false
		}
	case ClaimFree:
		if t.ClaimedBy != "" {
			return false
		}
	}
	if q.Overdue {
		now := q.Now
		if now.IsZero() {
			now = time.Now()
		}
		return t.Status == TaskPending && !t.Due.IsZero() && t.Due.Before(now)
	}
	return true
}

// Validate reports whether q is well formed. The error wraps ErrInvalid.
// It does not check PageToken, whose format belongs to each backend.
func (q *TaskQuery) Validate() error {
	for _, s := range q.Statuses {
		if !s.Valid() {
			return fmt.Errorf("%w: task query: invalid status %v", ErrInvalid, s)
		}
	}
	for _, f := range []struct {
		what, s string
		max     int
	}{{"assignee", q.Assignee, MaxAssigneeLen}, {"workflow", q.Workflow, MaxWorkflowLen}, {"handler id", q.HandlerID, MaxIDLen}} {
		if err := checkName(f.what, f.s, f.max, false); err != nil {
			return fmt.Errorf("task query: %w", err)
		}
	}
	if q.Assignee != "" && len(q.Assignees) > 0 {
		return fmt.Errorf("%w: task query: Assignee and Assignees together", ErrInvalid)
	}
	if len(q.Assignees) > MaxTaskQueryAssignees {
		return fmt.Errorf("%w: task query: more than %d assignees", ErrInvalid, MaxTaskQueryAssignees)
	}
	for _, a := range q.Assignees {
		if err := checkName("assignee", a, MaxAssigneeLen, true); err != nil {
			return fmt.Errorf("task query: %w", err)
		}
	}
	if q.PageSize < 0 {
		return fmt.Errorf("%w: task query: negative PageSize %d", ErrInvalid, q.PageSize)
	}
	if q.Claim > ClaimFree {
		return fmt.Errorf("%w: task query: invalid Claim %d", ErrInvalid, q.Claim)
	}
	return nil
}

// MaxTaskQueryAssignees bounds TaskQuery.Assignees (one index scan each).
const MaxTaskQueryAssignees = 64

// Limit returns the effective page size.
func (q *TaskQuery) Limit() int { return pageLimit(q.PageSize) }
