package gcpolicy

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Defaults of Options.
const (
	DefaultHeadroom = 32 << 20
	// DefaultMinPercent is Go's own GOGC: past the live heap where the
	// headroom is 100 %, the tuner leaves the heap to double, so the
	// collector marks one byte per byte allocated however many handlers
	// are in memory (at 25 % it marked four, and a park cost 1.5 times as
	// much with 200,000 idle handlers in memory: docs/PERFORMANCE.md).
	DefaultMinPercent = 100
	DefaultMaxPercent = 1000
)

// The runtime/metrics the tuner reads: the heap marked live by the latest
// collection, and the GOGC in effect.
const (
	liveHeapMetric = "/gc/heap/live:bytes"
	gogcMetric     = "/gc/gogc:percent"
)

// Options configure a Tuner. Zero values take the defaults.
type Options struct {
	// Headroom is how many bytes the heap may grow past the live heap
	// before the next collection, while MinPercent and MaxPercent allow.
	Headroom uint64
	// MinPercent and MaxPercent bound the GOGC the tuner sets. MinPercent
	// caps the collector's CPU cost at large heaps (each collection marks
	// the whole live heap, so at GOGC=25 it marks four bytes for every
	// byte allocated, at 100 one), at the price of memory (the heap may
	// grow MinPercent % past its live size); MaxPercent bounds the
	// collections' rarity at tiny heaps.
	MinPercent, MaxPercent int
	// Logger receives a debug record for each change of GOGC.
	Logger *slog.Logger
}

// Tuner adjusts GOGC after every garbage collection until Stop.
type Tuner struct {
	opts    Options
	sample  []metrics.Sample
	stopped atomic.Bool
	percent atomic.Int64 // the GOGC last set; 0 before the first
	// mu serializes adjust (run by the finalizer goroutine) with Stop.
	mu       sync.Mutex
	previous int // GOGC before Start, restored by Stop
}

// Start begins tuning and returns the tuner, or nil when the GOGC
// environment variable is set: an operator's explicit GOGC wins.
func Start(opts Options) *Tuner {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	if opts.Headroom == 0 {
		opts.Headroom = DefaultHeadroom
	}
	if opts.MinPercent <= 0 {
		opts.MinPercent = DefaultMinPercent
	}
	if opts.MaxPercent < opts.MinPercent {
		opts.MaxPercent = max(DefaultMaxPercent, opts.MinPercent)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	t := &Tuner{opts: opts, sample: []metrics.Sample{{Name: liveHeapMetric}}}
	t.previous = gcPercent()
	t.adjust()
	t.arm()
	return t
}

// Percent is the GOGC the tuner set last.
func (t *Tuner) Percent() int {
	if t == nil {
		return 0
	}
	return int(t.percent.Load())
}

// Stop ends tuning and restores the GOGC from before Start.
func (t *Tuner) Stop() {
	if t == nil || t.stopped.Swap(true) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	debug.SetGCPercent(t.previous)
}

// sentinel is garbage from the moment arm returns, so its finalizer runs
// after the next collection; the finalizer re-arms with a new one. (This is
// the usual way to hear about each collection: the runtime has no hook.)
type sentinel struct {
	t *Tuner
	_ [16]byte // big enough not to share a tiny-allocator block
}

func (t *Tuner) arm() {
	runtime.SetFinalizer(&sentinel{t: t}, func(s *sentinel) {
		if s.t.stopped.Load() {
			return
		}
		s.t.adjust()
		s.t.arm()
	})
}

// adjust sets GOGC to Headroom / live heap, clamped.
func (t *Tuner) adjust() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := percentFor(t.sample[0].Value.Uint64(), t.opts)
	if old := int(t.percent.Load()); p == old {
		return
	}
	debug.SetGCPercent(p)
	t.percent.Store(int64(p))
	t.opts.Logger.Debug("gc percent", "gogc", p, "live_heap", t.sample[0].Value.Uint64())
}

// gcPercent reads the GOGC in effect without changing it (reading it with
// debug.SetGCPercent would set it for a moment, which may start a
// collection).
func gcPercent() int {
	s := []metrics.Sample{{Name: gogcMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 100
	}
	return int(int64(s[0].Value.Uint64())) // GOGC=off is -1
}

// percentFor is the GOGC for a live heap of live bytes.
func percentFor(live uint64, o Options) int {
	if live == 0 {
		return o.MaxPercent
	}
	p := o.Headroom * 100 / live
	switch {
	case p < uint64(o.MinPercent):
		return o.MinPercent
	case p > uint64(o.MaxPercent):
		return o.MaxPercent
	}
	return int(p)
}
