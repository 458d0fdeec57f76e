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
}

// TaskAnswer is a person's answer to a task.
type TaskAnswer struct {
	Data        *structpb.Struct
	CompletedBy string
	CompletedAt time.Time
}
