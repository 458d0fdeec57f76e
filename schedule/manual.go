package schedule

import (
	"fmt"
	"time"
)

// Trigger decides a run of s now, outside its spec (an operator's
// "run now"): the overlap policy of s.Policy applies to it as to a tick
// (to override it for one trigger, set it on the Schedule passed), the
// catch-up window does not, and a paused schedule is triggered too. The
// run's handler id is TriggerHandlerID(s.ID, now): a retried request that
// passes the same instant names the same handler, whose start is
// idempotent. LastTick does not move.
func Trigger(s Schedule, now time.Time) (Decision, error) {
	c, err := s.check()
	if err != nil {
		return Decision{}, err
	}
	p := newPlanner(s, now)
	p.tick(Run{Tick: p.now, HandlerID: TriggerHandlerID(s.ID, p.now)}, "triggered")
	return p.finish(c, s.State), nil
}

// Backfill decides runs for the ticks of s in [from, to] (both
// inclusive), a range in the past (to not after now): at most MaxBackfill
// ticks, more is an error (wrapping ErrInvalid: backfill in smaller
// ranges). As Temporal does, the overlap policy of s.Policy applies
// (OverlapAllow runs them all; OverlapSkip starts the first and skips the
// rest while it runs; to choose for one backfill, set it on the Schedule
// passed), the catch-up window does not, and a paused schedule is
// backfilled too. Each run has the handler id of its tick
// (HandlerID): a tick that already ran is not started again, its
// handler exists. LastTick does not move.
func Backfill(s Schedule, from, to, now time.Time) (Decision, error) {
	c, err := s.check()
	if err != nil {
		return Decision{}, err
	}
	switch {
	case to.Before(from):
		return Decision{}, fmt.Errorf("%w: backfill of schedule %q: %s is before %s", ErrInvalid, s.ID,
			to.Format(time.RFC3339), from.Format(time.RFC3339))
	case to.After(now):
		return Decision{}, fmt.Errorf("%w: backfill of schedule %q: %s is in the future: its ticks come in their time",
			ErrInvalid, s.ID, to.Format(time.RFC3339))
	}
	ticks := c.ticks(from.Add(-time.Nanosecond), to, MaxBackfill+1)
	if len(ticks) > MaxBackfill {
		return Decision{}, fmt.Errorf("%w: backfill of schedule %q: more than %d ticks from %s to %s: backfill a shorter range",
			ErrInvalid, s.ID, MaxBackfill, from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	p := newPlanner(s, now)
	p.decide(ticks, func(t time.Time) Run { return Run{Tick: t, HandlerID: HandlerID(s.ID, t)} }, "backfill")
	return p.finish(c, s.State), nil
}
