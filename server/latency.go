package server

import (
	"slices"
	"sync"
	"time"
)

// latencyWindow is how many of the latest latencies a latencyRing keeps.
const latencyWindow = 1024

// latencyRing keeps the latest latencies, for quantiles.
type latencyRing struct {
	mu     sync.Mutex
	recent []time.Duration
	next   int
}

func (r *latencyRing) add(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.recent) < latencyWindow {
		r.recent = append(r.recent, d)
		return
	}
	r.recent[r.next] = d
	r.next = (r.next + 1) % latencyWindow
}

// quantiles returns the p50 and p99 of the recent latencies.
func (r *latencyRing) quantiles() (p50, p99 time.Duration) {
	r.mu.Lock()
	ds := slices.Clone(r.recent)
	r.mu.Unlock()
	if len(ds) == 0 {
		return 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)*50/100], ds[min(len(ds)*99/100, len(ds)-1)]
}
