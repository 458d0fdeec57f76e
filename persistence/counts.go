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
