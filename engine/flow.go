package engine

import "github.com/wfd-dev/wfd/flow"

// The step author's API lives in package flow; the engine keeps its names
// for it as aliases, so that a host (the server, the store, the CLI) that
// speaks of engine.Workflow or *engine.StepContext need not import flow.
// Errors are the same values (errors.Is holds across the two names).

// Workflow definitions.
type (
	Workflow    = flow.Workflow
	Step        = flow.Step
	StepFunc    = flow.StepFunc
	RetryPolicy = flow.RetryPolicy
	EventType   = flow.EventType
)

// Events.
type Event = flow.Event

// Reserved event types.
const (
	StartEvent = flow.StartEvent
	StopEvent  = flow.StopEvent
)

// What a step's calls take and return.
type (
	StepContext  = flow.StepContext
	ResolvedWait = flow.ResolvedWait
	WaitOptions  = flow.WaitOptions
	KeyOptions   = flow.KeyOptions
	Published    = flow.Published
	Task         = flow.Task
	TaskAnswer   = flow.TaskAnswer
	Children     = flow.Children
	ChildResult  = flow.ChildResult
)
