package live

import (
	"context"
	"sync"
	"time"
)

// scheduler wakes released handlers whose durable timers (wait deadlines,
// sleeps, whole-workflow timeouts) are due. It is one goroutine driven by
// the store's timer index, not a goroutine or a timer per handler; handlers
// in memory keep their own timers in their control loops.
type scheduler struct {
	s    *Runtime
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
		var next time.Time
		if t.s.replicated() {
			next = t.claim(ctx, now, now.Add(maxSchedulerSleep), sem)
		} else {
			next = t.fire(ctx, now, now.Add(maxSchedulerSleep), sem)
		}
		t.plan(next)
		timer.Reset(max(next.Sub(t.s.opts.Now()), time.Millisecond))
	}
}

// fire is a look of the scheduler in a single process: it loads the
// released handlers with due timers, which fire them once restored, and
// returns when to look again: at the next timer not yet due, at the latest
// at last.
func (t *scheduler) fire(ctx context.Context, now, last time.Time, sem chan struct{}) time.Time {
	next := last
	timers, err := t.s.store.DueTimers(ctx, last, scanTimers)
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
			if _, err := t.s.Live(ctx, id); err != nil && ctx.Err() == nil {
				t.s.log.Warn("waking handler for its timer", "handler", id, "err", err)
			}
		}(tm.HandlerID)
	}
	return next
}

func (t *scheduler) plan(next time.Time) {
	t.mu.Lock()
	t.nextAt = next
	t.mu.Unlock()
}

// claim is a look of the scheduler in replica mode: it claims the
// handlers with due timers that no replica holds (each claimed by exactly
// one replica: persistence.Claimer) and loads them with the lease
// claimed; the restored handlers fire their timers. Handlers live on this
// replica fire their own, and those live on another replica are not
// claimed: they fire there. It returns when to look again: at once after
// a full claim, else at the next timer not yet due (timers due on other
// replicas' handlers are passed over), at the latest at last.
func (t *scheduler) claim(ctx context.Context, now, last time.Time, sem chan struct{}) time.Time {
	claimed, err := t.s.owners.ClaimDue(ctx, now, scanTimers)
	if err != nil && ctx.Err() == nil {
		t.s.log.Warn("claiming due timers", "err", err)
	}
	for _, c := range claimed {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			t.s.resumeClaimed(ctx, c)
		}()
	}
	if len(claimed) == scanTimers {
		return now
	}
	timers, err := t.s.store.DueTimers(ctx, last, scanTimers)
	if err != nil && ctx.Err() == nil {
		t.s.log.Warn("scanning timers", "err", err)
	}
	for _, tm := range timers {
		if tm.Due.After(now) {
			return tm.Due
		}
	}
	return last
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
