package flow

import (
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

// WaitOptions narrow a wait (StepContext.WaitFor).
type WaitOptions struct {
	// Match lists fields the event's data must hold with these values.
	Match *structpb.Struct
	// Timeout is how long to wait from the first time the run reaches this
	// wait; 0 means no limit. When it passes, the wait returns ErrTimeout.
	Timeout time.Duration
}
