package live

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/wfd-dev/wfd/engine"
)

// reaper releases idle handlers after the idle timeout, and the least
// recently active ones whenever more idle handlers than the cap are in
// memory.
type reaper struct {
	s       *Runtime
	timeout time.Duration // 0: no timeout
	keep    int           // -1: no cap
	kick    chan struct{}
}

// releaseWorkers bounds concurrent releases; each waits for a commit, and
// commits are shared, so a few dozen in flight fill a commit well.
const releaseWorkers = 64

func (r *reaper) run(ctx context.Context) {
	tick := time.Second
	if r.timeout > 0 {
		tick = min(max(r.timeout/4, 10*time.Millisecond), time.Second)
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.kick:
		}
		var cutoff time.Time
		if r.timeout > 0 {
			cutoff = r.s.opts.Now().Add(-r.timeout)
		}
		ids := r.s.idle.pick(cutoff, r.keep)
		if len(ids) == 0 {
			continue
		}
		sem := make(chan struct{}, releaseWorkers)
		var wg sync.WaitGroup
		for _, id := range ids {
			h, ok := r.s.engine.Handler(id)
			if !ok {
				continue
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if _, err := h.Release(ctx); err != nil && !errors.Is(err, engine.ErrNotIdle) &&
					!errors.Is(err, engine.ErrHandlerDone) && !errors.Is(err, engine.ErrReleased) && ctx.Err() == nil {
					r.s.log.Warn("release failed", "handler", id, "err", err)
				}
			})
		}
		wg.Wait()
	}
}

// poke asks the reaper to run now (the cap was passed).
func (r *reaper) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}
