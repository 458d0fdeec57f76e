// Package gcpolicy sets the Go garbage collector's GOGC from the size of
// the live heap, so that the heap's headroom between collections is
// bounded in bytes rather than proportional to the live heap.
//
// With Go's default GOGC=100 the heap may grow to twice the live heap
// before a collection. For wfd that is the wrong trade at both ends: with
// a few thousand handlers in memory the live heap is small and the
// collector runs very often for little gain (a quarter of the server's CPU
// at 4,000 parks per second), while with 100,000 idle handlers in memory
// the same rule doubles a 300 MB live heap. A Tuner re-computes GOGC after
// every collection as Headroom / live heap, within [MinPercent,
// MaxPercent]: small heaps collect rarely. MinPercent decides large heaps:
// at Go's 100 (the default) the collector's cost per byte allocated stays
// the same however large the live heap grows; below it the heap keeps
// closer to its live size, and each collection, marking the whole live
// heap, comes sooner.
//
// A process has one garbage collector, so the tuner belongs to the
// program (wfd serve starts one), not to a library that the program
// embeds. It leaves GOGC alone when the GOGC environment variable is set,
// and GOMEMLIMIT keeps working as documented alongside it.
package gcpolicy
