package flow

import (
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

// Published is an event from the server's append-only event log: published
// under a key, for every handler or only one.
type Published struct {
	ID        string
	Key       string
	Data      *structpb.Struct
	At        time.Time
	HandlerID string // "" for every handler
}

// KeyOptions narrow WaitForKey.
type KeyOptions struct {
	// Since is the earliest publication taken (default: when the handler
	// started).
	Since time.Time
	// Timeout bounds the wait (0: none).
	Timeout time.Duration
}
