package live

import (
	"context"
	"runtime/debug"
	"time"
)

// After many handlers leave memory, the process keeps memory sized for the
// peak: Go maps keyed by handler id never shrink, the Go runtime returns
// freed heap to the OS only gradually, bbolt's file mapping keeps every page
// the releases touched resident, and bbolt's free-page bookkeeping keeps an
// entry for every page allocated since the file was opened. The reclaimer
// gives that back once releases have stopped for a while (debounced: one
// reclaim after a burst, never work per release): it rebuilds the maps that
// fell far below their peak, each under its owner's lock; if any did (a
// mass release, not a trickle of idle timeouts), it reopens the store,
// which drops bbolt's bookkeeping and mapping at the cost of a short pause
// (the transactions in progress end, then ~30 µs); otherwise it only drops the mapped pages. Then it
// returns free heap to the OS.

// storeReclaimer is a store that can let go of memory it keeps for its
// file (persistence/bolt's Store).
type storeReclaimer interface {
	// DropMappedPages drops the process's mapping of the file's pages.
	DropMappedPages(ctx context.Context) error
	// Reopen closes and opens the file, dropping everything kept in
	// memory for it; operations wait meanwhile.
	Reopen(ctx context.Context) error
}

// reclaimer runs a reclaim once releases have been quiet for quiet.
type reclaimer struct {
	s     *Runtime
	quiet time.Duration
}

func (rc *reclaimer) run(ctx context.Context) {
	t := time.NewTicker(max(rc.quiet/4, time.Millisecond))
	defer t.Stop()
	seen := rc.s.stats.Releases.Load()
	var changed time.Time // when releases last moved; zero once reclaimed
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			switch n := rc.s.stats.Releases.Load(); {
			case n != seen:
				seen, changed = n, now
			case !changed.IsZero() && now.Sub(changed) >= rc.quiet:
				changed = time.Time{}
				rc.reclaim(ctx, seen)
			}
		}
	}
}

// reclaim gives memory back to the OS; see the top of this file. releases
// is the count of releases it follows (logged, so that a reader can tell
// which burst a reclaim followed).
func (rc *reclaimer) reclaim(ctx context.Context, releases int64) {
	s := rc.s
	start := time.Now()
	rebuilt := 0
	for _, compact := range []func() bool{s.engine.Compact, s.idle.compact, s.hub.Compact, s.turns.Compact} {
		if compact() {
			rebuilt++
		}
	}
	store := "kept"
	if st, ok := s.store.(storeReclaimer); ok {
		done, op, do := "pages dropped", "dropping the store's mapped pages", st.DropMappedPages
		if rebuilt > 0 {
			done, op, do = "reopened", "reopening the store", st.Reopen
		}
		if err := do(ctx); err == nil {
			store = done
		} else if ctx.Err() == nil {
			s.log.Error("reclaim: "+op, "err", err)
		}
	}
	// After the store, so that what it let go of is returned too.
	debug.FreeOSMemory()
	s.stats.Reclaims.Add(1)
	s.log.Debug("reclaimed memory after releases", "releases", releases, "maps_rebuilt", rebuilt, "store", store,
		"took", time.Since(start))
}
