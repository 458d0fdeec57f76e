// Package engine runs event-driven workflows.
//
// A [Workflow] is a set of [Step]s. Each step accepts one or more event types
// and emits events of its own; an emitted event is queued for every step that
// accepts its type. A [Handler] is one run of a workflow: it starts with the
// [StartEvent] carrying the input and completes when a step emits the
// [StopEvent], whose payload becomes the result.
//
// Each live handler is owned by exactly one goroutine, its control loop. The
// loop holds the handler's state and applies one change at a time; step code
// runs in goroutines of its own and reports back to the loop through a
// channel, so no lock guards handler state. The state is data: [Handler.Snapshot]
// returns it as a protobuf message (statev1.HandlerState, wfd's internal
// checkpoint format, not part of the API), and [Engine.Restore] continues a
// snapshot in any process that registered the same workflow.
//
// A step may wait for an event ([flow.StepContext.WaitFor]). If the event
// has not arrived, the wait returns [ErrWaiting], which the step returns;
// the run ends and a waiter is recorded. When a matching event arrives the
// step runs again from the start with the same input, and this time the wait
// returns the event. A handler whose queues are empty, with nothing running,
// that can still be woken (by a waiter, a timer, or an event from outside)
// is idle; one that can never be woken again fails as stalled.
//
// The types a workflow's author uses (Workflow, Step, StepContext, Event,
// WaitOptions, Task, the errors a step checks, ...) are defined in package
// flow, which does not import the engine; the engine's names for them are
// aliases (flow.go), and its errors are the same values.
//
// Every change a client may see is a [Record] on the handler's stream, with a
// per-handler sequence number. A [Journal] receives the records, and the state
// to checkpoint, in order; the engine itself keeps nothing on disk.
package engine
