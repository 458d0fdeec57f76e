package flow

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// Reserved event types.
const (
	// StartEvent is the first event of every handler; its data is the input.
	StartEvent = "start"
	// StopEvent ends the handler that a step emits it in; its data is the result.
	StopEvent = "stop"
)

// Event is a typed, JSON-compatible message between steps, and between a
// handler and the outside world.
type Event struct {
	// ID is unique within a handler. The engine assigns it when the event
	// enters the handler (an ID set by the sender is replaced), so re-runs,
	// memos and fan-in can rely on it.
	ID   string
	Type string
	Data *structpb.Struct
}

// Matches reports whether every field of match is present in the event's
// data with an equal value. A nil or empty match matches every event.
func (e Event) Matches(match *structpb.Struct) bool {
	if len(match.GetFields()) == 0 {
		return true
	}
	data := e.Data.GetFields()
	for k, want := range match.GetFields() {
		got, ok := data[k]
		if !ok || !proto.Equal(got, want) {
			return false
		}
	}
	return true
}
