package flow

import (
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

// StepContext is what step code uses to talk to its handler: the engine
// passes one to each run of a [StepFunc]. It is valid only during the run
// it was passed to, and only from that run's goroutine.
//
// Its methods are carried out by the run's [Runtime]; a StepContext is
// made with [NewStepContext] (the zero value is not usable).
type StepContext struct {
	rt Runtime
}

// HandlerID returns the id of the handler the run belongs to.
func (sc *StepContext) HandlerID() string { return sc.rt.HandlerID() }

// Step returns the name of the running step.
func (sc *StepContext) Step() string { return sc.rt.Step() }

// Attempt returns the attempt number of this run, 1 for the first.
func (sc *StepContext) Attempt() int { return sc.rt.Attempt() }

// Send emits an event. Events are delivered when the run finishes (or parks
// in a wait); a run that fails sends nothing. The step must declare the type
// in Emits (ErrUndeclaredEvent otherwise). Data that breaks the payload
// rules (ErrInvalidPayload) or the run's output limits (ErrLimit) is
// refused and fails the run.
func (sc *StepContext) Send(typ string, data *structpb.Struct) error { return sc.rt.Send(typ, data) }

// Write puts an event on the handler's stream for clients (progress, a
// question to a person). Like Send it takes effect when the run finishes or
// parks, and not at all if it fails. A type or data that breaks the rules
// (a payload JSON cannot hold, data over the engine's Limits.MaxRecordBytes,
// more events than Limits.MaxQueuedEvents) fails the run.
func (sc *StepContext) Write(typ string, data *structpb.Struct) { sc.rt.Write(typ, data) }

// WaitFor returns the first event of type typ (matching opts.Match) that
// arrives after the run reached this wait. If none has arrived yet it
// returns ErrWaiting: the step must return that error, the run parks, and
// when the event arrives the step runs again from the start with the same
// input; this time WaitFor returns the event. Waits are told apart by their
// order within the run, so a step must reach its waits in the same order
// every time. When opts.Timeout passes first, the error wraps ErrTimeout.
func (sc *StepContext) WaitFor(typ string, opts WaitOptions) (Event, error) {
	return sc.rt.WaitFor(typ, opts)
}

// Sleep parks the run for d on a durable timer: it returns ErrWaiting, which
// the step must return, and nil when the step runs again after d.
func (sc *StepContext) Sleep(d time.Duration) error { return sc.rt.Sleep(d) }

// Collect gathers events for fan-in. Each call adds ev (once, by id) to the
// step's buffer; when the buffer holds one event for each entry of types
// (repeat a type to want several), Collect removes them and returns them in
// the order of types. Until then it returns nil, and the step returns nil
// to wait for the rest.
//
// A run that completes a set keeps it: when the run starts again (after a
// wait, a retry or a restore), the same call returns the same events.
func (sc *StepContext) Collect(ev Event, types ...string) ([]Event, error) {
	return sc.rt.Collect(ev, types...)
}

// Get reads a value of the handler's key/value store. The value is a copy
// the step may change; Set stores it.
func (sc *StepContext) Get(key string) (*structpb.Value, bool) { return sc.rt.Get(key) }

// Set writes a value of the handler's key/value store; nil deletes the key.
// The store is part of the handler's state and its snapshots. A key or
// value that breaks the payload rules (ErrInvalidPayload), or a store that
// would grow past the engine's Limits.MaxStoreBytes (ErrLimit), is refused
// and fails the run.
func (sc *StepContext) Set(key string, v *structpb.Value) error { return sc.rt.Set(key, v) }

// Once runs fn the first time a run of this step for this input event
// reaches it, and returns the recorded value on later re-runs (after a wait,
// a retry, or a restore), so side effects before a wait happen once. If fn
// fails, nothing is recorded. Records are dropped when the run finishes.
func (sc *StepContext) Once(key string, fn func() (*structpb.Value, error)) (*structpb.Value, error) {
	return sc.rt.Once(key, fn)
}

// AskHuman asks a person (see Task) and returns the answer. Like WaitFor it
// returns ErrWaiting, which the step returns, until the answer arrives; the
// handler is idle meanwhile and can be released. A passed deadline returns
// ErrTimeout.
func (sc *StepContext) AskHuman(t Task) (TaskAnswer, error) { return sc.rt.AskHuman(t) }

// WaitForKey returns an event published under key. If one exists already
// (published since opts.Since, by default since the handler started) it
// returns at once; otherwise it returns ErrWaiting, which the step returns,
// and the next publication with that key wakes the handler (in memory or
// released) and runs the step again, when WaitForKey returns it. Without
// an event log (the engine's Options.EventLog) only publications after the
// wait are seen.
func (sc *StepContext) WaitForKey(key string, opts KeyOptions) (Published, error) {
	return sc.rt.WaitForKey(key, opts)
}

// StartChild starts a child handler of workflow with input and returns its
// id. The id derives from the parent, the input event and the call's
// position in the run, so a re-run does not start it twice. Cancelling the
// parent cancels its running children.
//
// An input that breaks the payload rules (ErrInvalidPayload), or a child
// past the engine's Limits.MaxChildren (ErrLimit), is refused and fails
// the run.
func (sc *StepContext) StartChild(workflow string, input *structpb.Struct) (string, error) {
	return sc.rt.StartChild(workflow, input)
}

// WaitForChildren waits until every child in ids has ended. It returns at
// once if they have; otherwise it returns ErrWaiting, which the step
// returns, and the step runs again when the last one ends (the handler is
// idle meanwhile and can be released). If timeout passes first it returns
// where they stand, with Pending set, and an error wrapping ErrTimeout.
func (sc *StepContext) WaitForChildren(ids []string, timeout time.Duration) (Children, error) {
	return sc.rt.WaitForChildren(ids, timeout)
}

// SetAttributes updates the handler's search attributes: each field of
// update replaces that attribute (a null value deletes it), others keep
// theirs. Names must be declared in the workflow's Attributes and values
// of their type (an int a whole number, a time an RFC 3339 string, a
// keyword_list a list of strings); otherwise nothing is set and the error
// (wrapping ErrInvalidPayload) fails the run. The update rides the run's
// next change to the store: it costs no commit of its own.
func (sc *StepContext) SetAttributes(update *structpb.Struct) error {
	return sc.rt.SetAttributes(update)
}
