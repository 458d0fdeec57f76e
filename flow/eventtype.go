package flow

// EventType declares an event type a workflow takes from outside, that is
// from SendEvent: what it means and, optionally, the JSON Schema its data
// must match. A declared type is one of the workflow's External types
// (accepted at any time) or one its steps wait for with WaitFor (accepted
// while a step waits for it); declaring the latter is what tells clients
// (ListWorkflows, `wfd workflows`) that the workflow wants it. Declaring
// a type does not make it accepted: External and the waiters decide that,
// as without declarations. The types wfd sends itself (task answers,
// published keys, children's ends: the "wfd." types) cannot be declared;
// a task's answer is checked against the task's own schema.
type EventType struct {
	// Type is the event type: not empty, not "start" or "stop", not one
	// of the engine's "wfd." types, at most 256 bytes of UTF-8.
	Type string
	// Description says what the event means, for people (at most 64 KiB).
	Description string
	// Schema is a JSON Schema, as JSON, for the event's data (which is
	// always an object); nil accepts any object. It must be a JSON object
	// and self-contained (see InputSchema).
	Schema []byte
}
