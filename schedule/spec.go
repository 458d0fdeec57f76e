package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Spec says when a schedule fires: either a cron expression read in a
// time zone, or a fixed interval. Its fields are plain values, as they
// are stored (persistence.Schedule) and carried by the API; ParseSpec
// checks them.
type Spec struct {
	// Cron is a standard cron expression of five fields (minute, hour,
	// day of month, month, day of week), with lists, ranges, steps and
	// the names of months and days, or one of the descriptors @yearly,
	// @annually, @monthly, @weekly, @daily, @midnight and @hourly. @every
	// is not one: an interval is Interval. Empty for an interval.
	Cron string
	// TimeZone is the IANA time zone Cron is read in ("" for UTC). An
	// interval has none: its ticks are instants.
	TimeZone string
	// Interval, with Cron empty, fires every Interval, at the instants
	// Unix epoch + Phase + k*Interval: whole seconds, at least
	// MinInterval, at most MaxInterval.
	Interval time.Duration
	// Phase shifts the ticks of Interval (whole seconds, less than
	// Interval): an hourly interval with Phase 15m fires at :15.
	Phase time.Duration
	// Start and End, if not zero, bound the ticks: none before Start, none
	// after End (both inclusive).
	Start time.Time
	End   time.Time
}

// Limits of a Spec. Ticks fall on whole seconds and before the year
// MaxYear, so a tick names its handler to the second (HandlerID) and the
// interval arithmetic stays within int64 nanoseconds.
const (
	MinInterval = time.Second
	MaxInterval = 10 * 365 * 24 * time.Hour
	MaxCronLen  = 256
	MaxYear     = 2200
)

// SpecError is why a Spec is not valid. For a cron field, Field is its
// position (1 to 5) and Name its name; otherwise Field is 0 and Name says
// what is wrong ("cron", "time zone", "interval", "phase", "end",
// "spec"). It wraps ErrInvalid.
type SpecError struct {
	Field int
	Name  string
	Msg   string
}

func (e *SpecError) Error() string {
	if e.Field > 0 {
		return fmt.Sprintf("cron field %d (%s): %s", e.Field, e.Name, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Name, e.Msg)
}

// Unwrap returns ErrInvalid: a spec that is not valid is bad input.
func (e *SpecError) Unwrap() error { return ErrInvalid }

func specError(name, format string, args ...any) *SpecError {
	return &SpecError{Name: name, Msg: fmt.Sprintf(format, args...)}
}

// ParseSpec checks s and returns it normalized: the fields of Cron
// separated by single spaces, TimeZone "UTC" for a cron expression given
// none, Start and End in UTC. An invalid spec is a *SpecError.
func ParseSpec(s Spec) (Spec, error) {
	c, err := compile(s)
	if err != nil {
		return Spec{}, err
	}
	return c.spec, nil
}

// Validate reports whether s is valid: nil or a *SpecError.
func (s Spec) Validate() error {
	_, err := compile(s)
	return err
}

// Next returns the first tick of s after after, or the zero time if there
// is none (past End, beyond MaxYear) or s is not valid. Ticks are
// returned in UTC.
//
// A cron expression is read in its time zone as robfig/cron reads it,
// daylight saving time included: a time of day that a change skips (2:30
// on the night clocks go from 2:00 to 3:00) has no tick that day, and
// one a change repeats (1:30 on the night clocks go back from 2:00 to
// 1:00) has two, an hour apart. Each is an instant of its own, with a
// handler id of its own.
func (s Spec) Next(after time.Time) time.Time {
	c, err := compile(s)
	if err != nil {
		return time.Time{}
	}
	return c.next(after)
}

// Ticks returns the ticks t of s with from < t <= to, in order, at most
// max of them (none if max <= 0 or s is not valid).
func (s Spec) Ticks(from, to time.Time, max int) []time.Time {
	c, err := compile(s)
	if err != nil {
		return nil
	}
	return c.ticks(from, to, max)
}

// compiled is a valid Spec ready to compute ticks: its cron expression
// parsed and its time zone loaded once.
type compiled struct {
	spec Spec
	cron *cron.SpecSchedule // nil for an interval
}

func compile(s Spec) (*compiled, error) {
	if !s.Start.IsZero() {
		s.Start = s.Start.UTC()
	}
	if !s.End.IsZero() {
		s.End = s.End.UTC()
	}
	if !s.Start.IsZero() && !s.End.IsZero() && s.End.Before(s.Start) {
		return nil, specError("end", "%s is before the start %s", s.End.Format(time.RFC3339), s.Start.Format(time.RFC3339))
	}
	switch {
	case s.Cron != "" && s.Interval != 0:
		return nil, specError("spec", "either a cron expression or an interval, not both")
	case s.Cron != "":
		return compileCron(s)
	case s.Interval != 0:
		return compileInterval(s)
	default:
		return nil, specError("spec", "a cron expression or an interval is required")
	}
}

func compileInterval(s Spec) (*compiled, error) {
	switch {
	case s.TimeZone != "":
		return nil, specError("time zone", "an interval has none (its ticks are instants); leave it empty")
	case s.Interval < MinInterval:
		return nil, specError("interval", "%v is shorter than %v", s.Interval, MinInterval)
	case s.Interval > MaxInterval:
		return nil, specError("interval", "%v is longer than %v", s.Interval, MaxInterval)
	case s.Interval%time.Second != 0:
		return nil, specError("interval", "%v is not a whole number of seconds", s.Interval)
	case s.Phase < 0 || s.Phase >= s.Interval:
		return nil, specError("phase", "%v is not between 0 and the interval %v", s.Phase, s.Interval)
	case s.Phase%time.Second != 0:
		return nil, specError("phase", "%v is not a whole number of seconds", s.Phase)
	}
	return &compiled{spec: s}, nil
}

func compileCron(s Spec) (*compiled, error) {
	if s.Phase != 0 {
		return nil, specError("phase", "only an interval has one")
	}
	if s.TimeZone == "" {
		s.TimeZone = "UTC"
	}
	loc, err := loadZone(s.TimeZone)
	if err != nil {
		return nil, err
	}
	expr, err := checkCron(s.Cron)
	if err != nil {
		return nil, err
	}
	parsed, err := cron.ParseStandard(expr)
	if err != nil {
		// checkCron refuses what the parser would; this is a backstop.
		return nil, specError("cron", "%v", err)
	}
	sched, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return nil, specError("cron", "%q is not a calendar expression", expr)
	}
	sched.Location = loc
	// A day that no selected month has (30 2 *: February 30th): the
	// parser takes it, and Next would find nothing. A reference in a
	// leap year keeps February 29th.
	if sched.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, loc)).IsZero() {
		return nil, &SpecError{Field: 3, Name: cronFields()[2].name, Msg: "no month selected has such a day: the expression never fires"}
	}
	s.Cron = expr
	return &compiled{spec: s, cron: sched}, nil
}

// loadZone loads an IANA time zone. "Local" is refused: it is whatever
// the machine says, and replicas on two machines would disagree.
func loadZone(name string) (*time.Location, error) {
	if name == "Local" || strings.TrimSpace(name) != name {
		return nil, specError("time zone", "%q is not an IANA time zone name", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, specError("time zone", "unknown time zone %q", name)
	}
	return loc, nil
}

// minTick and maxTick bound the ticks Next returns: whole seconds from the
// Unix epoch to before the year MaxYear.
func minTick() time.Time { return time.Unix(0, 0).UTC() }
func maxTick() time.Time { return time.Date(MaxYear, 1, 1, 0, 0, 0, 0, time.UTC) }

// next is Spec.Next of a valid spec.
func (c *compiled) next(after time.Time) time.Time {
	if !c.spec.Start.IsZero() && after.Before(c.spec.Start) {
		after = c.spec.Start.Add(-time.Nanosecond)
	}
	if after.Before(minTick()) {
		after = minTick().Add(-time.Nanosecond)
	}
	if !after.Before(maxTick()) {
		return time.Time{}
	}
	var t time.Time
	if c.cron != nil {
		t = c.nextCron(after)
	} else {
		t = c.nextInterval(after)
	}
	if t.IsZero() || !t.Before(maxTick()) || (!c.spec.End.IsZero() && t.After(c.spec.End)) {
		return time.Time{}
	}
	return t
}

// nextCron asks the cron parser's schedule. It searches up to five years
// ahead, so a rare date (February 29th on a Monday) may come back zero
// from a time far from it; the search goes on from where it stopped until
// MaxYear.
func (c *compiled) nextCron(after time.Time) time.Time {
	for from := after; from.Before(maxTick()); from = from.AddDate(5, 0, 0) {
		if t := c.cron.Next(from); !t.IsZero() {
			if !t.After(after) {
				return time.Time{} // never seen; kept from looping
			}
			return t.UTC()
		}
	}
	return time.Time{}
}

// nextInterval is the first epoch + Phase + k*Interval after after.
// after is within minTick and maxTick, so the nanoseconds fit an int64.
func (c *compiled) nextInterval(after time.Time) time.Time {
	iv, phase := int64(c.spec.Interval), int64(c.spec.Phase)
	n := after.UnixNano() - phase
	k := n / iv
	if n%iv < 0 {
		k-- // floor, for times before epoch + Phase
	}
	return time.Unix(0, (k+1)*iv+phase).UTC()
}

// ticks is Spec.Ticks of a valid spec.
func (c *compiled) ticks(from, to time.Time, max int) []time.Time {
	var out []time.Time
	for t := c.next(from); !t.IsZero() && !t.After(to) && len(out) < max; t = c.next(t) {
		out = append(out, t)
	}
	return out
}
