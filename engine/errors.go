package engine

import (
	"errors"
	"fmt"

	"github.com/wfd-dev/wfd/attrs"

	"github.com/wfd-dev/wfd/flow"
)

// Errors returned by the engine. Callers test them with errors.Is; the
// service edge maps them to status codes.
var (
	// ErrInvalidWorkflow: a workflow definition failed validation
	// (flow.ErrInvalidWorkflow, the same value).
	ErrInvalidWorkflow = flow.ErrInvalidWorkflow
	// ErrNoConcurrencyKey: an input that gives no key of its workflow's
	// concurrency limit (flow.ErrNoConcurrencyKey, the same value).
	ErrNoConcurrencyKey = flow.ErrNoConcurrencyKey
	// ErrWorkflowExists: a workflow of that name is already registered.
	ErrWorkflowExists = errors.New("workflow already registered")
	// ErrUnknownWorkflow: no workflow of that name is registered.
	ErrUnknownWorkflow = errors.New("unknown workflow")
	// ErrUnknownVersion: the workflow is registered, but not the version
	// asked for (a VersionMissingError when a handler needs it). It is
	// not ErrUnknownWorkflow: a handler of a version no longer registered
	// waits for it, it does not fail.
	ErrUnknownVersion = errors.New("unknown workflow version")
	// ErrHandlerExists: a live handler already has that id.
	ErrHandlerExists = errors.New("handler already exists")
	// ErrHandlerDone: the handler has reached a terminal status (a
	// HandlerDoneError says which).
	ErrHandlerDone = errors.New("handler is finished")
	// ErrInvalidEvent: the event's type is reserved, or the workflow does not
	// accept it from outside and no waiter waits for it (an
	// EventRefusedError), or its data does not match the schema the
	// workflow declares for its type (a SchemaError).
	ErrInvalidEvent = errors.New("invalid event")
	// ErrNotIdle: the operation needs an idle handler.
	ErrNotIdle = errors.New("handler is not idle")
	// ErrClosed: the engine, or this handler's control loop, has stopped.
	ErrClosed = errors.New("engine closed")
	// ErrReleased: the handler was released; restore it to go on.
	ErrReleased = errors.New("handler was released from memory")
	// ErrLost: a change of the handler could not be made durable (its
	// journal acknowledged it with an error), so the handler left memory
	// without it and without anything it did after it: its last durable
	// checkpoint is where it stands. Restore it to go on. It is an
	// ErrReleased too (errors.Is), so a caller that restores a released
	// handler does the same for a lost one.
	ErrLost error = lostError{}
	// ErrInvalidState: a snapshot cannot be restored.
	ErrInvalidState = errors.New("invalid handler state")

	// ErrWaiting: the run must park; the step returns it
	// (flow.ErrWaiting, the same value).
	ErrWaiting = flow.ErrWaiting
	// ErrInterrupted is returned by a step whose run was cut from outside
	// while the engine closes (after Engine.Closing fires), such as a run
	// executed by a remote worker when the server shuts down: the run stays
	// in progress, as when Close's deadline passes, and runs again from
	// the start after a restore; it is not an attempt. Returned at any
	// other time it fails the attempt like any error.
	ErrInterrupted = errors.New("step run interrupted")
	// ErrTimeout: a wait's deadline passed before a matching event arrived
	// (flow.ErrTimeout, the same value).
	ErrTimeout = flow.ErrTimeout
	// ErrStalled: the handler is quiescent and nothing can ever wake it.
	ErrStalled = errors.New("handler stalled: no work queued or running and nothing can wake it")
	// ErrWorkflowTimeout: the whole-workflow timeout passed.
	ErrWorkflowTimeout = errors.New("workflow timed out")
	// ErrInvalidPayload: a payload, or a name or text a step passes, breaks the payload rules
	// (flow.ErrInvalidPayload, the same value).
	ErrInvalidPayload = flow.ErrInvalidPayload
	// ErrInvalidInput: the workflow's InputSchema (a SchemaError) or its
	// CheckInput refused the input.
	ErrInvalidInput = errors.New("invalid input")
	// ErrInvalidAttributes: search attributes a start or a step sets are
	// not declared by the workflow, or not of their declared type
	// (attrs.ErrInvalid, the same value).
	ErrInvalidAttributes = attrs.ErrInvalid
	// ErrLimit: the operation would pass one of the engine's Limits
	// (flow.ErrLimit, the same value).
	ErrLimit = flow.ErrLimit
	// ErrUndeclaredEvent: a step sent an event type it does not declare in Emits
	// (flow.ErrUndeclaredEvent, the same value).
	ErrUndeclaredEvent = flow.ErrUndeclaredEvent
)

type lostError struct{}

func (lostError) Error() string {
	return "handler left memory: a change of it could not be made durable"
}

// Is makes ErrLost an ErrReleased for errors.Is.
func (lostError) Is(target error) bool { return target == ErrReleased }

// HandlerDoneError is the ErrHandlerDone of a handler that has ended: an
// operation needs it running.
type HandlerDoneError struct {
	HandlerID string
	Status    Status
}

func (e *HandlerDoneError) Error() string {
	return fmt.Sprintf("%v: handler %s is %v", ErrHandlerDone, e.HandlerID, e.Status)
}

// Unwrap makes the error ErrHandlerDone for errors.Is.
func (e *HandlerDoneError) Unwrap() error { return ErrHandlerDone }

// errHandlerDone is ErrHandlerDone for handler id, which ended with status.
func errHandlerDone(id string, status Status) error {
	return &HandlerDoneError{HandlerID: id, Status: status}
}
