package flow

import "github.com/wfd-dev/wfd/internal/status"

// Status is where a handler is in its life: a child's, in [ChildResult].
// It is the engine's and the store's Status too.
type Status = status.Status

// Handler statuses. Completed, Failed and Cancelled are terminal.
const (
	StatusRunning   = status.Running
	StatusCompleted = status.Completed
	StatusFailed    = status.Failed
	StatusCancelled = status.Cancelled
)
