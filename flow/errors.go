package flow

import (
	"errors"

	pl "github.com/wfd-dev/wfd/internal/payload"
)

// Errors a step, or a workflow's author, checks with errors.Is. The engine
// returns these very values (engine.ErrWaiting is ErrWaiting), and so
// does a remote worker's Context.
var (
	// ErrWaiting is returned by StepContext.WaitFor and Sleep when the run
	// must park. The step returns it (wrapped or not); the run ends, and the
	// step runs again from the start once the wait resolves.
	ErrWaiting = errors.New("step is waiting")
	// ErrTimeout: a wait's deadline passed before a matching event arrived.
	ErrTimeout = errors.New("wait timed out")
	// ErrUndeclaredEvent: a step sent an event type it does not declare in Emits.
	ErrUndeclaredEvent = errors.New("event type not declared in the step's Emits")
	// ErrInvalidWorkflow: a workflow definition failed validation
	// (Workflow.Validate, and the engine's Register).
	ErrInvalidWorkflow = errors.New("invalid workflow")
	// ErrInvalidPayload: a payload (input, event data, result, stored
	// value) holds what JSON cannot (NaN, ±Infinity, a value with no kind,
	// invalid UTF-8), nests too deeply or is too large; or a name or text
	// a step passes is empty, too long or not UTF-8. The message names the
	// value, as in "input.items[3].x: NaN is not allowed".
	ErrInvalidPayload = pl.ErrInvalid
	// ErrLimit: the operation would pass one of the engine's Limits (a
	// step's output, the events a handler holds, its store, its children).
	ErrLimit = errors.New("limit exceeded")
)
