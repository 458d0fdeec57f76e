package schedule

import (
	"fmt"
	"time"
)

// Overlap is what a tick does while runs that the schedule started
// earlier still run.
type Overlap int

// The overlap policies. The zero value is OverlapSkip.
const (
	// OverlapSkip skips the tick (recorded as skipped) while any run of
	// the schedule still runs.
	OverlapSkip Overlap = iota
	// OverlapBufferOne keeps one tick (the first) while runs still run and
	// starts it once none does; further ticks meanwhile are skipped.
	OverlapBufferOne
	// OverlapAllow starts every tick, however many runs still run (up to
	// MaxRunning, beyond which ticks are skipped).
	OverlapAllow
	// OverlapCancelPrevious cancels the runs that still run and starts the
	// tick.
	OverlapCancelPrevious
)

// overlapNames are the policies' names, as stored and as the API spells
// them.
func overlapNames() [4]string { return [4]string{"skip", "buffer_one", "allow", "cancel_previous"} }

// String returns the policy's name ("skip", "buffer_one", "allow",
// "cancel_previous"): what persistence.Schedule.Overlap stores.
func (o Overlap) String() string {
	if o.Valid() {
		return overlapNames()[o]
	}
	return fmt.Sprintf("Overlap(%d)", int(o))
}

// Valid reports whether o is one of the policies.
func (o Overlap) Valid() bool { return o >= OverlapSkip && o <= OverlapCancelPrevious }

// ParseOverlap returns the policy named s ("" is OverlapSkip). An unknown
// name wraps ErrInvalid.
func ParseOverlap(s string) (Overlap, error) {
	if s == "" {
		return OverlapSkip, nil
	}
	for i, name := range overlapNames() {
		if s == name {
			return Overlap(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown overlap policy %q (use skip, buffer_one, allow or cancel_previous)", ErrInvalid, s)
}

// DefaultCatchupWindow is the catch-up window of a Policy that sets none.
const DefaultCatchupWindow = time.Minute

// Policy says what a schedule does with ticks that overlap earlier runs
// and with ticks that come late.
type Policy struct {
	Overlap Overlap
	// CatchupWindow is how late a tick may still start: when the
	// scheduler comes to a schedule (after downtime, say), ticks older
	// than the window are recorded as missed, not started. 0 means
	// DefaultCatchupWindow.
	CatchupWindow time.Duration
}

// Window returns the catch-up window in effect.
func (p Policy) Window() time.Duration {
	if p.CatchupWindow == 0 {
		return DefaultCatchupWindow
	}
	return p.CatchupWindow
}

// Validate reports whether p is valid. The error wraps ErrInvalid.
func (p Policy) Validate() error {
	switch {
	case !p.Overlap.Valid():
		return fmt.Errorf("%w: unknown overlap policy %v", ErrInvalid, p.Overlap)
	case p.CatchupWindow < 0:
		return fmt.Errorf("%w: catch-up window %v is negative", ErrInvalid, p.CatchupWindow)
	case p.CatchupWindow > MaxInterval:
		return fmt.Errorf("%w: catch-up window %v is longer than %v", ErrInvalid, p.CatchupWindow, MaxInterval)
	}
	return nil
}
