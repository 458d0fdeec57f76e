package server

import (
	"sync/atomic"
)

// dispatchStats count what the worker registry does, for GetStats.
type dispatchStats struct {
	dispatches   atomic.Int64
	redispatches atomic.Int64
	latency      latencyRing
}

// connected counts the connected workers.
func (r *workerRegistry) connected() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.workers)
}
