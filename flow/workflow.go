package flow

import (
	"time"

	"github.com/wfd-dev/wfd/attrs"

	"google.golang.org/protobuf/types/known/structpb"
)

// Workflow is a named set of steps.
type Workflow struct {
	Name string
	// Version names this definition among the versions of the workflow
	// Name: a handler runs the version it started on to its end, across
	// release and restart, while newer handlers start on the newest
	// version registered. Empty: the definition's hash (the engine's
	// DefinitionHash), so that a changed definition is a new version.
	Version     string
	Description string
	Steps       []Step
	// External lists the event types that clients may send to a running
	// handler (SendEvent) for the steps that accept them. An event of another
	// type is accepted only while a waiter of the handler waits for it.
	External []string
	// Events declares event types the workflow takes from outside, External
	// ones or ones its steps wait for, with what they mean and the JSON
	// Schema of their data (see EventType). SendEvent refuses data its
	// type's schema refuses (the engine's SchemaError).
	Events []EventType
	// InputSchema is a JSON Schema, as JSON, for the input (the start
	// event's data); nil accepts any object. Start refuses an input it
	// refuses (the engine's SchemaError, ErrInvalidInput), before
	// CheckInput, which remains for what a schema cannot say. Like every
	// schema here it must be a JSON object and self-contained: a "$ref"
	// may point inside it, never at a file or URL. Draft 2020-12 applies
	// unless "$schema" names another; "format" is not checked.
	InputSchema []byte
	// Timeout bounds the whole run from its start; 0 means no limit. It is
	// kept as an absolute deadline, so restoring a snapshot does not restart it.
	Timeout time.Duration
	// CheckInput, if set, validates the input of a new handler before it
	// is created (Engine.Start, children too): an error refuses the start
	// with the engine's ErrInvalidInput and the error's text, and nothing
	// is stored. It runs on the caller's goroutine and must not block.
	CheckInput func(input *structpb.Struct) error
	// Attributes declares the workflow's search attributes: name → type.
	// A handler is given values of them at start and its steps update
	// them (StepContext.SetAttributes); they are stored with its metadata
	// and indexed, so that ListHandlers filters and sorts by them. A
	// changed declaration makes a new version.
	Attributes attrs.Schema
	// Concurrency limits how many handlers run at once and start per
	// interval, per key of their input (nil: no limit).
	Concurrency *Concurrency
}

// Validate checks the definition and reports every problem it finds, in
// one error that wraps ErrInvalidWorkflow. The engine registers only a
// definition that passes.
func (w *Workflow) Validate() error {
	c := checker{w: w}
	c.check()
	return c.err()
}
