package persistence

// Counts summarises the handlers in a store. Backends maintain the counters
// on every write, so Store.Count does not scan.
type Counts struct {
	Handlers    int64               // all stored handlers
	Idle        int64               // handlers with IdleSince set
	ByStatus    map[Status]int64    // every valid Status is present
	ByResidency map[Residency]int64 // every valid Residency is present
}
