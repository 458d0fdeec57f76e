package persistence

import "context"

// WorkerRoutes tells replicas where the step workers of each workflow
// are connected, so that the work of a worker-defined workflow goes to a
// replica that has its workers (the server's worker routes). Each replica
// advertises the definitions its connected workers serve; an
// advertisement lasts as long as the replica's registration (Leaser):
// it is gone with Leave and ignored once the registration expired. The
// PostgreSQL store implements it; bbolt (one process) does not.
type WorkerRoutes interface {
	// AdvertiseWorkflows replaces the definitions replica's connected
	// workers serve with served (none: served empty). It does nothing
	// for a replica that is not registered.
	AdvertiseWorkflows(ctx context.Context, replica string, served []ServedWorkflow) error
	// WorkflowRoutes lists what the workers of every live replica serve,
	// by replica id, then workflow.
	WorkflowRoutes(ctx context.Context) ([]WorkflowRoute, error)
	// StrandedHandlers lists (by id, at most limit) the running handlers
	// of these workflows that are busy (not idle) and active by their
	// residency but whose lease is not live: a replica left them with
	// runs in progress (it handed them over, shut down or died), and
	// nothing has loaded them since.
	StrandedHandlers(ctx context.Context, workflows []string, limit int) ([]string, error)
}

// ServedWorkflow is a workflow definition (its name and content hash,
// WorkflowDef) that a replica's connected workers serve.
type ServedWorkflow struct {
	Workflow string
	Hash     string
}

// WorkflowRoute is a definition served by the workers of a live replica,
// with the replica's advertised address.
type WorkflowRoute struct {
	Replica string
	Address string
	ServedWorkflow
}
