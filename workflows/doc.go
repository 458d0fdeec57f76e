// Package workflows holds the example workflows that wfd serves out of the
// box: echo, approval and fanin; expense (a human task), order (waits for a
// published payment), batch with its job children, notebook (takes
// events at any time) and deploy (one at a time per environment: a
// concurrency key). Each declares the JSON Schemas of its input and of
// the events it takes from outside. They double as documentation of the
// step API and as fixtures for the engine, server and client tests.
package workflows

import "github.com/wfd-dev/wfd/flow"

// All returns every example workflow.
func All() []flow.Workflow {
	return []flow.Workflow{Echo(), Approval(), FanIn(), Expense(), Order(), Batch(), Job(), Notebook(), Deploy()}
}
