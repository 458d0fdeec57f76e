package persistence

import "time"

// Timer is a waiter's deadline or a handler's Deadline, as returned by
// Store.DueTimers.
type Timer struct {
	Due       time.Time
	HandlerID string
	// WaiterID is the waiter whose deadline it is; "" for the handler's
	// own Deadline.
	WaiterID string
}

// Idle is an idle handler, as returned by Store.LongestIdle.
type Idle struct {
	HandlerID string
	Since     time.Time
}
