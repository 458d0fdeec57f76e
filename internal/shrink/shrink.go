// Package shrink gives back the memory of Go maps that fell far below their
// peak size: a map keeps the buckets of its largest size after its entries
// are deleted, so a map keyed by handler id would otherwise stay sized for
// the most handlers it ever held.
package shrink

import (
	"maps"
	"sync"
)

// A map is rebuilt once it has held MinPeak entries and holds less than
// 1/Ratio of its peak.
const (
	MinPeak = 1024
	Ratio   = 4
)

// Map returns m rebuilt at its current size, and resets *peak, if m fell
// far below *peak; otherwise m itself. It reports whether it rebuilt m. The
// caller holds whatever guards m and keeps *peak up to date on inserts
// (*peak = max(*peak, len(m))). A rebuild copies m, so call it when quiet,
// not per operation.
func Map[K comparable, V any](m map[K]V, peak *int) (map[K]V, bool) {
	if *peak < MinPeak || len(m)*Ratio >= *peak {
		return m, false
	}
	// Not maps.Clone, which keeps the source's size.
	n := make(map[K]V, len(m))
	maps.Copy(n, m)
	*peak = len(n)
	return n, true
}

// Locked is Map for a map that mu guards, the way its owner calls it: it
// takes mu, replaces *m by its rebuilt copy if it fell far below *peak, and
// reports whether it did.
func Locked[K comparable, V any](mu sync.Locker, m *map[K]V, peak *int) bool {
	mu.Lock()
	defer mu.Unlock()
	var rebuilt bool
	*m, rebuilt = Map(*m, peak)
	return rebuilt
}
