package flow

import (
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

// Context is what a step uses to talk to its handler: the methods of
// [*StepContext] that step code calls, documented there. *StepContext
// satisfies it, and so does a remote worker's context
// (clients/go/worker), so a step written against Context runs in process
// and in a worker alike.
type Context interface {
	HandlerID() string
	Step() string
	Attempt() int
	Send(typ string, data *structpb.Struct) error
	Write(typ string, data *structpb.Struct)
	WaitFor(typ string, opts WaitOptions) (Event, error)
	Sleep(d time.Duration) error
	Collect(ev Event, types ...string) ([]Event, error)
	Get(key string) (*structpb.Value, bool)
	Set(key string, v *structpb.Value) error
	Once(key string, fn func() (*structpb.Value, error)) (*structpb.Value, error)
	AskHuman(t Task) (TaskAnswer, error)
	WaitForKey(key string, opts KeyOptions) (Published, error)
	StartChild(workflow string, input *structpb.Struct) (string, error)
	WaitForChildren(ids []string, timeout time.Duration) (Children, error)
	SetAttributes(update *structpb.Struct) error
}

var _ Context = (*StepContext)(nil)
