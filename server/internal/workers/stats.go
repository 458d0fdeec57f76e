package workers

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

// Connected counts the connected workers.
func (r *Registry) Connected() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.workers)
}

// Dispatches counts the runs sent to workers.
func (r *Registry) Dispatches() int64 { return r.stats.dispatches.Load() }

// Redispatches counts the runs sent again after their worker was lost.
func (r *Registry) Redispatches() int64 { return r.stats.redispatches.Load() }

// DispatchLatency is the median and 99th percentile of the time from
// sending a run to its worker to the worker's first call.
func (r *Registry) DispatchLatency() (p50, p99 time.Duration) { return r.stats.latency.Quantiles() }
