package persistence

import "github.com/wfd-dev/wfd/internal/status"

// Status is where a handler is in its life. The zero value is unspecified
// and never stored. It is the engine's engine.Status (both are aliases of
// one definition in internal/status), so the server stores what the
// engine reports without converting it.
type Status = status.Status

// Handler statuses. Completed, failed and cancelled are terminal.
const (
	StatusRunning   = status.Running
	StatusCompleted = status.Completed
	StatusFailed    = status.Failed
	StatusCancelled = status.Cancelled
)

// Statuses lists every valid status, in numeric order.
func Statuses() []Status { return status.All() }
