package persistence

import "fmt"

// Status is where a handler is in its life. The zero value is unspecified
// and never stored.
type Status int

// Handler statuses. Completed, failed and cancelled are terminal.
const (
	StatusRunning Status = iota + 1
	StatusCompleted
	StatusFailed
	StatusCancelled
)

// Statuses lists every valid status, in numeric order.
func Statuses() []Status {
	return []Status{StatusRunning, StatusCompleted, StatusFailed, StatusCancelled}
}

// Valid reports whether s is one of the defined statuses.
func (s Status) Valid() bool { return s >= StatusRunning && s <= StatusCancelled }

// Terminal reports whether a handler with status s has ended.
func (s Status) Terminal() bool { return s >= StatusCompleted && s <= StatusCancelled }

func (s Status) String() string {
	switch s {
	case StatusRunning:
		return "running"
	case StatusCompleted:
		return "completed"
	case StatusFailed:
		return "failed"
	case StatusCancelled:
		return "cancelled"
	default:
		return fmt.Sprintf("Status(%d)", int(s))
	}
}
