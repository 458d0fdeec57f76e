package persistence

import "time"

// Timer is a waiter's deadline, as returned by Store.DueTimers.
type Timer struct {
	Due       time.Time
	HandlerID string
	WaiterID  string
}

// Idle is an idle handler, as returned by Store.LongestIdle.
type Idle struct {
	HandlerID string
	Since     time.Time
}
