package schedule

import (
	"fmt"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// The store keeps a schedule as plain values (persistence.Schedule) and
// this package gives them their meaning; it imports persistence, never
// the reverse, as the engine's snapshots are bytes to the store. Load
// and Into convert between the two, so that State and NextTick, which
// the store indexes, are always written together.

// Load returns the planning view of a stored schedule. A state that
// cannot be decoded fails with an error wrapping persistence.ErrCorrupt;
// a spec or policy the package does not take, with one wrapping
// ErrInvalid.
func Load(p persistence.Schedule) (Schedule, error) {
	overlap, err := ParseOverlap(p.Overlap)
	if err != nil {
		return Schedule{}, fmt.Errorf("schedule %q: %w", p.ID, err)
	}
	st, err := DecodeState(p.State)
	if err != nil {
		return Schedule{}, fmt.Errorf("%w: schedule %q: %w", persistence.ErrCorrupt, p.ID, err)
	}
	s := Schedule{
		ID: p.ID,
		Spec: Spec{Cron: p.Cron, TimeZone: p.TimeZone, Interval: p.Interval, Phase: p.Phase,
			Start: zeroUTC(p.StartAt), End: zeroUTC(p.EndAt)},
		Policy: Policy{Overlap: overlap, CatchupWindow: p.CatchupWindow},
		Paused: p.Paused,
		State:  st,
	}
	if _, err := s.check(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// Into writes s into p, the stored schedule: its id, spec (normalized),
// policy, paused flag, and its state encoded with NextTick beside it.
// The rest of p (workflow, input, note, owner, times, revision) is left
// as it is.
func (s Schedule) Into(p *persistence.Schedule) error {
	if _, err := s.check(); err != nil {
		return err
	}
	spec, err := ParseSpec(s.Spec)
	if err != nil {
		return err
	}
	if err := SetState(p, s.State); err != nil {
		return err
	}
	p.ID = s.ID
	p.Cron, p.TimeZone, p.Interval, p.Phase, p.StartAt, p.EndAt =
		spec.Cron, spec.TimeZone, spec.Interval, spec.Phase, spec.Start, spec.End
	p.Overlap, p.CatchupWindow = s.Policy.Overlap.String(), s.Policy.CatchupWindow
	p.Paused = s.Paused
	return nil
}

// SetSpec changes the spec of s at now: ticks of the new spec count from
// now on (none between LastTick and now is caught up), and NextTick is
// the new spec's. A buffered run stays buffered.
func (s *Schedule) SetSpec(spec Spec, now time.Time) error {
	c, err := compile(spec)
	if err != nil {
		return fmt.Errorf("schedule %q: %w", s.ID, err)
	}
	s.Spec = c.spec
	s.restart(c, now)
	return nil
}

// SetPaused pauses or resumes s at now. A resumed schedule counts its
// ticks from now on: the ticks of the pause are not caught up.
func (s *Schedule) SetPaused(paused bool, now time.Time) error {
	c, err := compile(s.Spec)
	if err != nil {
		return fmt.Errorf("schedule %q: %w", s.ID, err)
	}
	if s.Paused && !paused {
		s.restart(c, now)
	}
	s.Paused = paused
	return nil
}

// restart makes the ticks of c count from now (or LastTick, if later).
func (s *Schedule) restart(c *compiled, now time.Time) {
	s.State = s.State.clone()
	if now = now.Round(0).UTC(); s.State.LastTick.Before(now) {
		s.State.LastTick = now
	}
	s.State.NextTick = s.State.next(c)
}

// SetState writes st into the stored schedule p: encoded, with its
// NextTick beside it, where the store indexes it. It is what the
// scheduler writes back after a Decision, before UpdateSchedule.
func SetState(p *persistence.Schedule, st State) error {
	enc, err := EncodeState(st)
	if err != nil {
		return err
	}
	p.State, p.NextTick = enc, st.NextTick
	return nil
}
