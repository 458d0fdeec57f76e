package histcheck

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Takeover is one measurement: a replica (the victim) was killed or paused
// At; First is how long until a call for a handler it owned, made through
// another replica and retried, was first acknowledged (Served false: never
// within the run). Each holds every such handler's time, where a schedule
// answers many.
type Takeover struct {
	Schedule string          `json:"schedule"`
	Kind     string          `json:"kind"` // "kill" or "pause"
	Victim   string          `json:"victim"`
	At       time.Time       `json:"at"`
	Served   bool            `json:"served"`
	First    time.Duration   `json:"first"`
	Each     []time.Duration `json:"each,omitempty"`
	// Paused is how long a paused victim stayed stopped (0 for a kill):
	// a handler served elsewhere only after that was blocked by it.
	Paused time.Duration `json:"paused,omitempty"`
}

// Stats summarises durations.
type Stats struct {
	N                     int
	Min, Median, P99, Max time.Duration
}

func (s Stats) String() string {
	if s.N == 0 {
		return "n=0"
	}
	return fmt.Sprintf("n=%d min %v median %v p99 %v max %v", s.N, s.Min.Round(time.Millisecond),
		s.Median.Round(time.Millisecond), s.P99.Round(time.Millisecond), s.Max.Round(time.Millisecond))
}

// Summarize computes the stats of ds (nearest-rank percentiles: the p99 of
// fewer than 100 samples is their maximum).
func Summarize(ds []time.Duration) Stats {
	if len(ds) == 0 {
		return Stats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration { return s[max(0, int(math.Ceil(p*float64(len(s))))-1)] }
	return Stats{N: len(s), Min: s[0], Median: rank(0.5), P99: rank(0.99), Max: s[len(s)-1]}
}

// never stands for a takeover that did not happen within the run: above
// any bound, so that it fails the check.
const never = time.Duration(math.MaxInt64)

// TakeoverStats returns the stats of the first acknowledgements of the
// takeovers of kind ("kill" or "pause"); one never served counts as never.
func TakeoverStats(ts []Takeover, kind string) Stats {
	var ds []time.Duration
	for _, t := range ts {
		if t.Kind == kind {
			ds = append(ds, firstOrNever(t))
		}
	}
	return Summarize(ds)
}

// EachStats returns the stats of every handler's time in the takeovers of
// schedule.
func EachStats(ts []Takeover, schedule string) Stats {
	var ds []time.Duration
	for _, t := range ts {
		if t.Schedule == schedule {
			ds = append(ds, t.Each...)
		}
	}
	return Summarize(ds)
}

func firstOrNever(t Takeover) time.Duration {
	if !t.Served {
		return never
	}
	return t.First
}

// CheckTakeovers holds the takeovers to their invariants. blocked lists
// the pauses during which some handler of the victim was not served
// elsewhere at all (only once the victim was continued, or never): that
// the owner blocked its handlers for as long as it was stopped is a
// defect however slow the machine. late lists the bounds (TTL + 2 s in
// the design notes) the p99 of kills, of pauses and of every handler of
// the paused-owner schedule broke: a figure of the machine as much as of
// wfd, which a run holds itself to only when asked (Config.Strict).
func CheckTakeovers(ts []Takeover, bound time.Duration) (blocked, late []string) {
	for _, t := range ts {
		if t.Paused == 0 {
			continue
		}
		times := t.Each
		if len(times) == 0 {
			times = []time.Duration{firstOrNever(t)}
		}
		n := 0
		for _, d := range times {
			if d >= t.Paused {
				n++
			}
		}
		if n > 0 {
			blocked = append(blocked, fmt.Sprintf("%s of %s at %s: %d of %d handlers served elsewhere only once it was continued after %v (or never)",
				t.Schedule, t.Victim, t.At.Format("15:04:05.000"), n, len(times), t.Paused.Round(time.Millisecond)))
		}
	}
	check := func(what string, s Stats) {
		if s.N > 0 && s.P99 > bound {
			p99 := s.P99.Round(time.Millisecond).String()
			if s.P99 == never {
				p99 = "never (a handler was not served elsewhere within the run)"
			}
			late = append(late, fmt.Sprintf("takeover after %s: p99 %s > bound %v (%s)", what, p99, bound, s))
		}
	}
	check("kills", TakeoverStats(ts, "kill"))
	check("pauses", TakeoverStats(ts, "pause"))
	check("paused-owner, each handler", EachStats(ts, SchedulePausedOwner))
	return blocked, late
}
