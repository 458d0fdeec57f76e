package server

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfd-dev/wfd/server/internal/observe"
)

// dispatchStats count what the worker registry does, for GetStats and
// /metrics.
type dispatchStats struct {
	dispatches   atomic.Int64
	redispatches atomic.Int64
	latency      observe.LatencyRing
	// seconds is the dispatch latency histogram (stats.hist.dispatch).
	seconds prometheus.Histogram
}

// answered records the latency of one dispatch.
func (d *dispatchStats) answered(l time.Duration) {
	d.latency.Add(l)
	d.seconds.Observe(l.Seconds())
}

// connected counts the connected workers.
func (r *workerRegistry) connected() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.workers)
}
