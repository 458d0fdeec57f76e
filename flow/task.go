package flow

import (
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

// Task is a question for a person (StepContext.AskHuman): a waiter with a
// title, a description, the JSON Schema the answer must satisfy, an
// assignee and a deadline.
type Task struct {
	// ID is set by the engine: "<handler id>:<waiter id>", so a re-run asks
	// the same task again rather than a new one.
	ID          string
	Title       string
	Description string
	// Schema is a JSON Schema for the answer (nil: any object).
	Schema   *structpb.Struct
	Assignee string
	// Deadline bounds the wait (0: none); when it passes the task expires
	// and AskHuman returns ErrTimeout.
	Deadline time.Duration
	// Input is what the person is to look at (an expense's lines, a
	// document's fields), shown as a table or tree; nil: nothing but the
	// description. InputSchema, if set, is a JSON Schema Input must match
	// (its titles and descriptions label the display).
	Input       *structpb.Struct
	InputSchema *structpb.Struct
	// Escalation, if set, acts on the task when it is still pending
	// Escalation.After its asking: the task is overdue from then on.
	Escalation *Escalation
}

// Escalation is what happens to a task nobody answered in time: it is
// reassigned (Reassign, a person or "group:<role>"; its claim ends),
// and/or an event is published under the key Notify (its data names the
// task, its handler and its assignees), for whoever waits for it. The
// task stays pending; its Deadline, if any, still ends it.
type Escalation struct {
	After    time.Duration
	Reassign string
	Notify   string
}

// TaskAnswer is a person's answer to a task.
type TaskAnswer struct {
	Data        *structpb.Struct
	CompletedBy string
	CompletedAt time.Time
	// Cancelled: nobody answered; the task was cancelled (CancelTask) by
	// CompletedBy at CompletedAt, for Reason. Data is nil then.
	Cancelled bool
	Reason    string
}

// TaskEventData is the data of the event that resolves task taskID ("":
// left out) with a: the engine's TaskEvent, which TaskAnswerOf reads.
func TaskEventData(taskID string, a TaskAnswer) *structpb.Struct {
	f := map[string]*structpb.Value{
		"completed_by": structpb.NewStringValue(a.CompletedBy),
		"completed_at": structpb.NewStringValue(a.CompletedAt.UTC().Format(time.RFC3339Nano)),
	}
	if taskID != "" {
		f["task_id"] = structpb.NewStringValue(taskID)
	}
	if a.Cancelled {
		f["cancelled"], f["reason"] = structpb.NewBoolValue(true), structpb.NewStringValue(a.Reason)
	} else {
		f["answer"] = structpb.NewStructValue(a.Data)
	}
	return &structpb.Struct{Fields: f}
}

// TaskAnswerOf reads the data of the event that resolves a task (the
// engine's TaskEvent, TaskEventData's form: "answer", or "cancelled" with
// "reason"; and "completed_by", "completed_at"): what AskHuman returns, in
// the engine and in a worker.
func TaskAnswerOf(data *structpb.Struct) TaskAnswer {
	f := data.GetFields()
	at, _ := time.Parse(time.RFC3339Nano, f["completed_at"].GetStringValue())
	a := TaskAnswer{CompletedBy: f["completed_by"].GetStringValue(), CompletedAt: at}
	if f["cancelled"].GetBoolValue() {
		a.Cancelled, a.Reason = true, f["reason"].GetStringValue()
		return a
	}
	a.Data = f["answer"].GetStructValue()
	return a
}
