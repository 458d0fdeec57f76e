package observe

import (
	"slices"
	"sync"
	"time"
)

// LatencyWindow is how many of the latest latencies a LatencyRing keeps.
const LatencyWindow = 1024

// LatencyRing keeps the latest latencies, for quantiles.
type LatencyRing struct {
	mu     sync.Mutex
	recent []time.Duration
	next   int
}

func (r *LatencyRing) Add(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.recent) < LatencyWindow {
		r.recent = append(r.recent, d)
		return
	}
	r.recent[r.next] = d
	r.next = (r.next + 1) % LatencyWindow
}

// Quantiles returns the p50 and p99 of the recent latencies.
func (r *LatencyRing) Quantiles() (p50, p99 time.Duration) {
	r.mu.Lock()
	ds := slices.Clone(r.recent)
	r.mu.Unlock()
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)*50/100], ds[min(len(ds)*99/100, len(ds)-1)]
}
