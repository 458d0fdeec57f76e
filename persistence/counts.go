package persistence

// Counts summarises the handlers and tasks in a store. Backends maintain the counters
// on every write, so Store.Count does not scan.
type Counts struct {
	Handlers    int64               // all stored handlers
	Idle        int64               // handlers with IdleSince set
	ByStatus    map[Status]int64    // every valid Status is present
	ByResidency map[Residency]int64 // every valid Residency is present

	Tasks         int64                // all stored tasks
	TasksByStatus map[TaskStatus]int64 // every valid TaskStatus is present
}

// VersionCount is how many handlers of one workflow run one of its
// versions in one status and residency: a line of
// HandlerVersions.CountVersions, which tells an operator whether an old
// version still has handlers before it is deleted.
type VersionCount struct {
	Version   string // Handler.WorkflowVersion; "" for handlers stored before versions
	Status    Status
	Residency Residency
	Count     int64
}
