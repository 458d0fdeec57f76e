package schedule

import (
	"fmt"
	"time"
)

// Schedule is what planning needs of a schedule: its id, spec, policy,
// whether it is paused, and its state. Load builds one from a stored
// persistence.Schedule and Into writes it back.
type Schedule struct {
	ID     string
	Spec   Spec
	Policy Policy
	Paused bool
	State  State
}

// Decision is what a plan decided: runs to cancel, then runs to start,
// and the state that records it. Plan, Trigger and Backfill compute it
// from their arguments alone, so the same schedule, state and time
// always give the same decision, on any replica.
type Decision struct {
	// Cancel lists the handlers to cancel before the starts
	// (OverlapCancelPrevious).
	Cancel []string
	// Start lists the runs to start, in tick order.
	Start []Run
	// Outcomes says what became of each tick decided, in order (missed
	// ticks summed up in one); they are in State.Recent too.
	Outcomes []Outcome
	// State is the schedule's state after the decision.
	State State
	// Changed reports whether State differs from the state planned from:
	// only then is there something to record (and to act on).
	Changed bool
}

// Limits of one decision, which keep a pass short whatever the spec and
// the downtime before it.
const (
	// MaxTicksPerPass is the most due ticks one Plan decides one by one;
	// the rest stay due (NextTick is not later than now) for the next
	// pass.
	MaxTicksPerPass = 1000
	// MaxMissedCounted is the most missed ticks one Plan counts one by
	// one; beyond, it records that more were missed and jumps to the
	// catch-up window.
	MaxMissedCounted = 10_000
	// MaxBackfill is the most ticks one Backfill takes.
	MaxBackfill = 1000
)

// Plan decides what the scheduler does with s at now: which of the ticks
// due since State.LastTick to start, skip, buffer or record as missed,
// and whether to cancel runs that still run. Before it, the server
// prunes State.Running (State.Prune), so that the overlap policy counts
// the runs that still run.
//
// Ticks older than the policy's catch-up window (before now - window)
// are missed: counted and recorded in one outcome, never started. The
// others are decided one by one, in time order, as if each had come on
// time, a run started for an earlier one counting as running for the
// later ones: after downtime with a window wider than the interval,
// OverlapSkip starts the first tick of the window and skips the rest
// while it runs, OverlapBufferOne starts the first and buffers the
// second, OverlapAllow starts them all. OverlapCancelPrevious starts only
// the last (cancelling the runs that still run): the earlier ones would
// be cancelled at once, and are skipped as superseded.
//
// A buffered tick starts, before any new tick is decided, at the first
// plan that finds nothing running; until then the schedule stays due
// (State.NextTick is the buffered tick's time), so the scheduler comes
// back to it on every pass.
//
// A paused schedule starts nothing and records nothing: LastTick moves to
// now, so the ticks of the pause are never caught up, not when it
// resumes either (SetPaused moves LastTick too). A state that has never
// counted (zero LastTick) starts counting at now; NewState does that when
// the schedule is created.
func Plan(s Schedule, now time.Time) (Decision, error) {
	c, err := s.check()
	if err != nil {
		return Decision{}, err
	}
	p := newPlanner(s, now)
	switch {
	case p.st.LastTick.IsZero() || s.Paused:
		if p.st.LastTick.Before(p.now) {
			p.st.LastTick = p.now
		}
	default:
		p.startBuffered()
		p.missed(c)
		p.due(c)
	}
	return p.finish(c, s.State), nil
}

// check validates s and compiles its spec.
func (s *Schedule) check() (*compiled, error) {
	if err := ValidateID(s.ID); err != nil {
		return nil, err
	}
	if err := s.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("schedule %q: %w", s.ID, err)
	}
	c, err := compile(s.Spec)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %w", s.ID, err)
	}
	return c, nil
}

// planner builds one Decision.
type planner struct {
	id     string
	policy Policy
	now    time.Time
	st     State // a copy of the schedule's, changed as ticks are decided
	d      Decision
}

func newPlanner(s Schedule, now time.Time) *planner {
	// Round(0) drops a monotonic clock reading: the decision holds
	// instants only, equal however they were read.
	return &planner{id: s.ID, policy: s.Policy, now: now.Round(0).UTC(), st: s.State.clone()}
}

// finish sets NextTick and Changed, and returns the decision.
func (p *planner) finish(c *compiled, before State) Decision {
	p.st.NextTick = p.st.next(c)
	p.d.State = p.st
	p.d.Changed = len(p.d.Outcomes) > 0 || !p.st.LastTick.Equal(before.LastTick) ||
		!p.st.NextTick.Equal(before.NextTick) || p.st.Buffered != before.Buffered
	return p.d
}

func (p *planner) outcome(r Run, kind OutcomeKind, reason string) {
	o := Outcome{Tick: r.Tick, HandlerID: r.HandlerID, Kind: kind, Reason: reason, At: p.now}
	if kind == OutcomeSkipped || kind == OutcomeMissed {
		o.HandlerID = "" // no run has the id
	}
	p.d.Outcomes = append(p.d.Outcomes, o)
	p.st.record(o)
}

// start starts r.
func (p *planner) start(r Run, kind OutcomeKind, reason string) {
	p.d.Start = append(p.d.Start, r)
	p.st.Running = append(p.st.Running, r.HandlerID)
	p.outcome(r, kind, reason)
}

// startBuffered starts the buffered run if nothing runs.
func (p *planner) startBuffered() {
	if p.st.Buffered.IsZero() || len(p.st.Running) > 0 {
		return
	}
	r := p.st.Buffered
	p.st.Buffered = Run{}
	p.start(r, OutcomeStarted, "buffered until the previous run ended")
}

// missed counts the ticks after LastTick and before the catch-up window,
// and moves LastTick past them.
func (p *planner) missed(c *compiled) {
	cutoff := p.now.Add(-p.policy.Window())
	var (
		n           int
		first, last time.Time
		more        bool
	)
	for t := c.next(p.st.LastTick); !t.IsZero() && t.Before(cutoff); t = c.next(t) {
		if n == MaxMissedCounted {
			more = true
			break
		}
		if n == 0 {
			first = t
		}
		n, last = n+1, t
	}
	if n == 0 {
		return
	}
	p.st.Missed += uint64(n)
	p.st.LastTick = last
	reason := fmt.Sprintf("older than the catch-up window (%v) when the scheduler came to it", p.policy.Window())
	switch {
	case more:
		// Too many to count: the rest of them, up to the window, are
		// passed over.
		p.st.LastTick = cutoff.Add(-time.Nanosecond)
		reason = fmt.Sprintf("%d ticks from %s and more, up to the catch-up window (%v), were missed",
			n, first.Format(time.RFC3339), p.policy.Window())
	case n > 1:
		reason = fmt.Sprintf("%d ticks from %s to %s were %s", n, first.Format(time.RFC3339), last.Format(time.RFC3339), reason)
	}
	p.outcome(Run{Tick: last}, OutcomeMissed, reason)
}

// due decides the ticks after LastTick up to now, at most
// MaxTicksPerPass, and moves LastTick to the last decided.
func (p *planner) due(c *compiled) {
	ticks := c.ticks(p.st.LastTick, p.now, MaxTicksPerPass)
	if len(ticks) == 0 {
		return
	}
	p.decide(ticks, func(t time.Time) Run { return Run{Tick: t, HandlerID: HandlerID(p.id, t)} }, "")
	p.st.LastTick = ticks[len(ticks)-1]
}

// decide applies the overlap policy to ticks, in order; run names each
// tick's run and reason says what started them ("" for their time
// coming).
func (p *planner) decide(ticks []time.Time, run func(time.Time) Run, reason string) {
	if p.policy.Overlap == OverlapCancelPrevious && len(ticks) > 1 {
		last := ticks[len(ticks)-1]
		for _, t := range ticks[:len(ticks)-1] {
			p.outcome(run(t), OutcomeSkipped, fmt.Sprintf("superseded by the tick at %s, decided with it", last.Format(time.RFC3339)))
		}
		ticks = ticks[len(ticks)-1:]
	}
	for _, t := range ticks {
		p.tick(run(t), reason)
	}
}

// tick applies the overlap policy to one run.
func (p *planner) tick(r Run, reason string) {
	running := len(p.st.Running)
	switch {
	case running >= MaxRunning:
		p.outcome(r, OutcomeSkipped, fmt.Sprintf("%d runs still run, the most one schedule keeps", running))
	case running == 0:
		p.start(r, OutcomeStarted, reason)
	case p.policy.Overlap == OverlapAllow:
		p.start(r, OutcomeStarted, reason)
	case p.policy.Overlap == OverlapCancelPrevious:
		p.d.Cancel = append(p.d.Cancel, p.st.Running...)
		p.start(r, OutcomeCancelledPrevious, joinReason(reason, fmt.Sprintf("cancelled %d previous run(s)", running)))
	case p.policy.Overlap == OverlapBufferOne && p.st.Buffered.IsZero():
		p.st.Buffered = r
		p.outcome(r, OutcomeBuffered, joinReason(reason, fmt.Sprintf("%d run(s) still run", running)))
	case p.policy.Overlap == OverlapBufferOne:
		p.outcome(r, OutcomeSkipped, fmt.Sprintf("the tick at %s is buffered already", p.st.Buffered.Tick.Format(time.RFC3339)))
	default: // OverlapSkip
		p.outcome(r, OutcomeSkipped, fmt.Sprintf("%d run(s) still run", running))
	}
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
