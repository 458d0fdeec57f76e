package server

import (
	"context"
	"errors"
	"sync"
	"time"
)

// scheduler wakes released handlers whose durable timers (wait deadlines,
// sleeps, whole-workflow timeouts) are due. It is one goroutine driven by
// the store's timer index, not a goroutine or a timer per handler; handlers
// in memory keep their own timers in their control loops.
type scheduler struct {
	s    *Server
	wake chan struct{}

	mu     sync.Mutex
	nextAt time.Time // when the loop plans to look again
}

// maxSchedulerSleep bounds how long the scheduler trusts its plan.
const maxSchedulerSleep = time.Second

// scanTimers is how many timers one look takes from the index.
const scanTimers = 512

func (t *scheduler) run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	sem := make(chan struct{}, 32)
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-t.wake:
		}
		now := t.s.opts.Now()
		next := now.Add(maxSchedulerSleep)
		timers, err := t.s.store.DueTimers(ctx, next, scanTimers)
		if err != nil && ctx.Err() == nil {
			t.s.log.Warn("scanning timers", "err", err)
		}
		for _, tm := range timers {
			if tm.Due.After(now) {
				next = tm.Due
				break
			}
			if _, live := t.s.engine.Handler(tm.HandlerID); live {
				continue // its own loop fires it
			}
			sem <- struct{}{}
			go func(id string) {
				defer func() { <-sem }()
				// A handler live on another replica fires its timers there.
				if _, err := t.s.live(ctx, id); err != nil && ctx.Err() == nil && !errors.As(err, new(*ownedError)) {
					t.s.log.Warn("waking handler for its timer", "handler", id, "err", err)
				}
			}(tm.HandlerID)
		}
		t.mu.Lock()
		t.nextAt = next
		t.mu.Unlock()
		timer.Reset(max(next.Sub(t.s.opts.Now()), time.Millisecond))
	}
}

// notify tells the scheduler about a timer of a handler that just left
// memory, in case it is due before the scheduler's next look.
func (t *scheduler) notify(due time.Time) {
	t.mu.Lock()
	early := due.Before(t.nextAt)
	t.mu.Unlock()
	if early {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}
