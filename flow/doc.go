// Package flow is what a workflow's author writes against: the definition
// of a workflow ([Workflow], [Step], [StepFunc], [RetryPolicy],
// [EventType]), the [Event]s its steps exchange, the [Context] a step
// talks to its handler through (with what its calls take and return:
// [WaitOptions], [KeyOptions], [Published], [Task], [TaskAnswer],
// [Children], [ChildResult], [Status]), and the errors a step checks
// ([ErrWaiting], [ErrTimeout], ...).
//
// The same step code runs in process, where the engine
// (github.com/wfd-dev/wfd/engine) passes it a [*StepContext], and in a
// remote worker (github.com/wfd-dev/wfd/clients/go/worker), whose Context
// calls the server. The engine's names for these types (engine.Workflow,
// engine.StepContext, ...) are aliases of the ones here.
//
// Dependency rule: flow imports neither the engine (the engine imports
// flow) nor anything that serves, calls or stores (gRPC, net/http, the
// public API's generated code, the server, the store), so that a worker
// process gets the author's API without the engine; deps_test.go checks
// it.
package flow
