package engine

import (
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/status"
)

// Status is where a handler is in its life: running, then one of the
// terminal completed, failed and cancelled. It is the store's
// persistence.Status (both are aliases of one definition in
// internal/status, since neither package imports the other), and its
// values are those of wfdv1.HandlerStatus.
type Status = status.Status

// Handler statuses.
const (
	StatusRunning   = status.Running
	StatusCompleted = status.Completed
	StatusFailed    = status.Failed
	StatusCancelled = status.Cancelled
)

// RecordKind says which part of a Record is set.
type RecordKind uint8

// Kinds of stream records.
const (
	// RecordStepState: a step run started or ended (Record.Step).
	RecordStepState RecordKind = iota + 1
	// RecordEvent: a step wrote an event to the stream (Record.Event).
	RecordEvent
	// RecordIdle: the handler became idle (Record.Idle set) or busy (nil).
	RecordIdle
	// RecordTerminal: the handler ended (Record.Status, Result, Error).
	RecordTerminal
	// RecordReleased: the idle handler left memory (Handler.Release).
	RecordReleased
	// RecordRestored: the handler was rebuilt from a snapshot (Engine.Restore).
	RecordRestored
	// RecordBlocked: a run in progress started or stopped waiting for
	// something outside the handler to execute it (Record.Blocked), as
	// its step reported with StepContext.Blocked.
	RecordBlocked
	// RecordUpgraded: the handler moved to another version of its
	// workflow (Record.Upgraded).
	RecordUpgraded
	// RecordAdmitted: the handler, queued for a slot of its concurrency
	// key, was admitted: its held events are delivered and it runs.
	RecordAdmitted
	// RecordTask: a human task of the handler changed: asked, answered,
	// cancelled (CancelTask) or expired (Record.Task).
	RecordTask
	// RecordMemo: a step run memoized a value (Once).
	RecordMemo
)

// Record is one entry of a handler's stream. Records are values with few
// pointers so that producing them costs no allocations on the hot path.
type Record struct {
	// Seq numbers the handler's records from 1 without gaps.
	Seq  uint64
	Time time.Time
	Kind RecordKind

	Step  StepChange // RecordStepState
	Event Event      // RecordEvent
	Idle  *Idle      // RecordIdle; nil when the handler became busy

	Status Status           // RecordTerminal
	Result *structpb.Struct // RecordTerminal, completed
	Error  string           // RecordTerminal, failed or cancelled

	Blocked  *Blocked    // RecordBlocked
	Upgraded *Upgraded   // RecordUpgraded
	Task     *TaskChange // RecordTask
	Memo     *Memo       // RecordMemo
}

// Memo is what a RecordMemo says: a step run's Once value under its key.
type Memo struct {
	Step, Key string
	Value     *structpb.Value
}

// TaskChange is what a RecordTask says: which task, what happened to it,
// by whom and why.
type TaskChange struct {
	TaskID, Title, Assignee string
	Change                  TaskChangeKind
	// By answered, cancelled, claimed, unclaimed, reassigned or
	// commented on it; Reason is a cancellation's, To a reassignment's
	// new assignee (Assignee the one before), Text a comment's.
	By, Reason string
	To, Text   string
}

// TaskChangeKind is what happened to a task.
type TaskChangeKind uint8

// Kinds of task changes (the values of wfdv1.TaskChange).
const (
	TaskAsked TaskChangeKind = iota + 1
	TaskAnswered
	TaskCancelled
	TaskExpired
	TaskClaimed
	TaskUnclaimed
	TaskReassigned
	TaskCommented
	TaskEscalated
)

// Blocked is a run in progress that waits for something outside the
// handler to execute it: a server's proxy step waiting for a worker.
type Blocked struct {
	Step    string
	Attempt int
	// On says what the run waits for (e.g. "worker"); "" means it
	// stopped waiting.
	On string
}

// StepChange is a step run starting (Running) or ending.
type StepChange struct {
	Step    string
	Worker  int
	Running bool
	// InputType is the type of the event the run was started for.
	InputType string
	// Emitted lists the types the run sent (set when it ended).
	Emitted []string
	Attempt int
	// Outcome of an ended run: "" for finished, "waiting", or the error.
	Waiting bool
	Error   string
}

// Idle is what an idle handler waits for.
type Idle struct {
	Since   time.Time
	Waiters []WaiterInfo
	// External lists the event types the handler's steps accept from outside.
	External []string
	// Queued: the handler waits for a slot of its concurrency key (its
	// events are held until it is admitted).
	Queued bool
}

// WaiterInfo describes one parked step run.
type WaiterInfo struct {
	ID   string
	Step string
	// EventType is empty for a durable sleep.
	EventType string
	Match     *structpb.Struct
	Deadline  time.Time // zero: none
	// Task is set for a human task (AskHuman), with its assignee now;
	// Life says who holds it and its comments (nil: nobody, none).
	Task *Task
	Life *TaskLife
	// EscalateAt is when the task escalates (zero: never, or it did): a
	// timer, as Deadline is.
	EscalateAt time.Time
	// Key is set for a wait on a published key (WaitForKey); Since is the
	// earliest publication it takes.
	Key   string
	Since time.Time
	// Children is set for a wait on children (WaitForChildren).
	Children []string
	// Created is when the run parked.
	Created time.Time
}

// Resolution is a waiter that was resolved: by an event, or by its deadline.
type Resolution struct {
	Waiter   WaiterInfo
	TimedOut bool
	Event    Event
}
