package persistence

import "time"

// Finished is a finished handler's position in Store.FinishedBefore's
// order: by CompletedAt, ties by ID.
type Finished struct {
	HandlerID   string
	CompletedAt time.Time
}
