package server

import (
	"context"
	"runtime/debug"
	"time"
)

// After many handlers leave memory, the process keeps memory sized for the
// peak: Go maps keyed by handler id never shrink, the Go runtime returns
// freed heap to the OS only gradually, and bbolt's file mapping keeps every
// page the releases touched resident. The reclaimer gives that back once
// releases have stopped for a while (debounced: one reclaim after a burst,
// never work per release): it rebuilds the maps that fell far below their
// peak, each under its owner's lock, returns free heap to the OS, and asks
// the store to drop its mapped pages.

// pageDropper is a store that can let go of the process's mapping of its
// pages (persistence/bolt's Store).
type pageDropper interface {
	DropMappedPages(ctx context.Context) error
}

// reclaimer runs a reclaim once releases have been quiet for quiet.
type reclaimer struct {
	s     *Server
	quiet time.Duration
}

func (rc *reclaimer) run(ctx context.Context) {
	t := time.NewTicker(max(rc.quiet/4, time.Millisecond))
	defer t.Stop()
	seen := rc.s.stats.releases.Load()
	var changed time.Time // when releases last moved; zero once reclaimed
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			switch n := rc.s.stats.releases.Load(); {
			case n != seen:
				seen, changed = n, now
			case !changed.IsZero() && now.Sub(changed) >= rc.quiet:
				changed = time.Time{}
				rc.reclaim(ctx)
			}
		}
	}
}

// reclaim gives memory back to the OS; see the top of this file.
func (rc *reclaimer) reclaim(ctx context.Context) {
	s := rc.s
	start := time.Now()
	rebuilt := 0
	for _, compact := range []func() bool{s.engine.Compact, s.idle.compact, s.hub.compact, s.turns.compact} {
		if compact() {
			rebuilt++
		}
	}
	debug.FreeOSMemory()
	dropped := false
	if d, ok := s.store.(pageDropper); ok {
		if err := d.DropMappedPages(ctx); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("reclaim: dropping the store's mapped pages", "err", err)
			}
		} else {
			dropped = true
		}
	}
	s.stats.reclaims.Add(1)
	s.log.Debug("reclaimed memory after releases", "maps_rebuilt", rebuilt, "store_pages_dropped", dropped,
		"took", time.Since(start))
}

// Reclaims returns how many times the server has given memory back after
// releases (see Options.ReclaimAfter).
func (s *Server) Reclaims() int64 { return s.stats.reclaims.Load() }
