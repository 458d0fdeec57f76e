// Package workers holds the step workers (docs/ARCHITECTURE.md "Step
// workers"): the Registry of connected workers and the definitions they
// registered (stored, and registered again at start-up), the proxy steps
// that dispatch a run to a worker and execute its StepCalls and
// FinishRun on the run's real StepContext, the WorkerService handler
// (Mount), the ownership of worker-defined workflows, and, in replica
// mode, the routing of their work to the replica whose workers serve it.
//
// The Registry is the runtime's live.Workers. What it needs of replica
// mode it asks through Replica, an interface it defines. It imports the
// runtime (internal/live), the engine and the store, apierr and observe;
// it must not import its sibling rooms (rpc, replica) nor the server.
package workers
