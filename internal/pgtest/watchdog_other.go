//go:build !linux

package pgtest

// startWatchdog does nothing where there is no Pdeathsig: a test binary
// killed without calling Stop leaves its cluster running there.
func (c *Cluster) startWatchdog() error { return nil }

func (c *Cluster) stopWatchdog() {}
