package flow

import (
	"context"
	"time"
)

// StepFunc is the code of a step. It runs in a goroutine of its own with the
// event it was started for. Returning nil finishes the run and commits what
// it sent and wrote; returning an error fails this attempt (and retries it,
// if the step's policy allows). A step that waits returns [ErrWaiting].
//
// ctx is cancelled when the step's timeout passes or the handler ends.
type StepFunc func(ctx context.Context, sc *StepContext, in Event) error

// Step is one event-driven unit of a workflow.
type Step struct {
	Name string
	// Accepts lists the event types that start a run of this step.
	Accepts []string
	// Emits lists the event types this step may send. Sending any other type
	// is an error: the declaration lets Register check that every accepted
	// type has a producer.
	Emits []string
	// Workers limits how many runs of this step execute at once (default 1).
	Workers int
	// Retry says how often, and after what pause, a failed run is tried again.
	Retry RetryPolicy
	// Timeout bounds one run; 0 means no limit. A run that times out fails
	// its attempt.
	Timeout time.Duration
	// Linger, if longer than the engine's Options.Linger, is how long a
	// change of the handler waits while a run of this step is in progress
	// before it is committed without the run's outcome. A run that ends
	// within it shares one commit with what led to it (a start and the
	// park it leads to, an answer and the completion). The server gives
	// the steps that step workers run a longer one: their runs cross the
	// network twice. It is not part of the definition's version.
	Linger time.Duration
	Run    StepFunc
}
