package persistence

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// Schedule is a stored workflow schedule: when it fires (its spec), what
// each firing starts (a workflow with an input), how firings that overlap
// or come late are treated (its policy), and what the scheduler made of
// it so far (State).
//
// The store keeps plain values and interprets none of them: the package
// schedule parses the spec and the policy, plans the ticks and encodes
// State. persistence does not import schedule (schedule imports
// persistence), for the same reason it stores snapshots as bytes: the
// store's format does not change when the scheduler's rules do. What
// the store does read is NextTick and Paused, which index the schedules
// that are due (Schedules.DueSchedules).
//
// Times are stored with nanosecond precision and returned in UTC; the
// caller sets them (an update keeps CreatedAt by passing the stored one
// on) and the store stores them as given.
type Schedule struct {
	// ID names the schedule, the key it is stored under: 1 to
	// MaxScheduleIDLen bytes, no NUL (the schedule package allows fewer
	// characters; the store only needs a key).
	ID string

	// The spec: a cron expression in TimeZone ("" for UTC), or, with Cron
	// "", a fixed Interval shifted by Phase; no tick before StartAt or
	// after EndAt (zero: unbounded).
	Cron     string
	TimeZone string
	Interval time.Duration
	Phase    time.Duration
	StartAt  time.Time
	EndAt    time.Time

	// What each tick starts: a handler of Workflow, at WorkflowVersion
	// ("": the current version when it starts), with Input (the start
	// event's payload, JSON, opaque to the store; nil for none).
	Workflow        string
	WorkflowVersion string
	Input           []byte

	// The policy: Overlap names what a tick does while earlier runs still
	// run (schedule.Overlap's String; "" for the default), and
	// CatchupWindow how late a tick may still start (0 for the default).
	Overlap       string
	CatchupWindow time.Duration

	// Paused schedules are never due: DueSchedules leaves them out.
	Paused bool
	// Note is free text: why the schedule exists, why it was paused.
	Note string
	// Owner is the authenticated subject that created the schedule, whose
	// rights its runs are started with; "" without authentication.
	Owner string

	CreatedAt time.Time
	UpdatedAt time.Time

	// NextTick is when the scheduler must look at the schedule next (its
	// next tick, or sooner); zero for never. A schedule that is not
	// Paused is indexed by it, so DueSchedules is a range scan. The
	// schedule package sets it with State, from which it derives.
	NextTick time.Time
	// State is what the scheduler keeps between ticks (the last tick, the
	// runs it started, recent outcomes, counters), encoded by the
	// schedule package and opaque to the store; nil for none yet.
	State []byte

	// Revision identifies the stored version of the schedule: every
	// create and update sets it to a number that no other create or
	// update in the store had or will have, greater than the one before.
	// UpdateSchedule takes the revision its writer read and fails with
	// ErrConflict if the schedule changed since (or was deleted and
	// created again), which is how several replicas agree on which of
	// them recorded a tick. The store maintains it; the value a writer
	// sets is ignored.
	Revision uint64
}

// Limits of a Schedule. They keep a stored schedule small: the scheduler
// reads every due one on every pass.
const (
	MaxScheduleIDLen    = 64      // Schedule.ID
	MaxCronLen          = 256     // Schedule.Cron
	MaxTimeZoneLen      = 64      // Schedule.TimeZone, longer than any IANA name
	MaxOverlapLen       = 32      // Schedule.Overlap
	MaxNoteLen          = 4096    // Schedule.Note
	MaxScheduleInputLen = 1 << 20 // Schedule.Input: the engine's largest payload
	MaxScheduleStateLen = 1 << 20 // Schedule.State, far above what the schedule package writes
)

// Page sizes of Schedules.ListSchedules.
const (
	DefaultSchedulePageSize = 100
	MaxSchedulePageSize     = 1000
)

// Validate reports whether s may be stored. It checks what the store
// needs (keys, sizes, representable times), not whether the spec parses:
// that is the schedule package's. The error wraps ErrInvalid.
func (s *Schedule) Validate() error {
	if err := ValidateScheduleID(s.ID); err != nil {
		return err
	}
	if err := s.validateText(); err != nil {
		return fmt.Errorf("schedule %q: %w", s.ID, err)
	}
	switch {
	case s.Interval < 0 || s.Phase < 0 || s.CatchupWindow < 0:
		return fmt.Errorf("%w: schedule %q: a negative duration", ErrInvalid, s.ID)
	case len(s.Input) > MaxScheduleInputLen:
		return fmt.Errorf("%w: schedule %q: input has %d bytes, more than %d", ErrInvalid, s.ID, len(s.Input), MaxScheduleInputLen)
	case len(s.State) > MaxScheduleStateLen:
		return fmt.Errorf("%w: schedule %q: state has %d bytes, more than %d", ErrInvalid, s.ID, len(s.State), MaxScheduleStateLen)
	}
	for _, t := range []struct {
		name string
		t    time.Time
	}{{"StartAt", s.StartAt}, {"EndAt", s.EndAt}, {"CreatedAt", s.CreatedAt}, {"UpdatedAt", s.UpdatedAt}, {"NextTick", s.NextTick}} {
		if err := checkTime(t.name, t.t); err != nil {
			return fmt.Errorf("schedule %q: %w", s.ID, err)
		}
	}
	return nil
}

// validateText checks the string fields: names as keys are checked, and
// the rest for length and UTF-8 (PostgreSQL refuses text that is not).
func (s *Schedule) validateText() error {
	if err := checkName("workflow", s.Workflow, MaxWorkflowLen, true); err != nil {
		return err
	}
	if err := checkName("workflow version", s.WorkflowVersion, MaxVersionLen, false); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		s    string
		max  int
	}{
		{"cron", s.Cron, MaxCronLen}, {"time zone", s.TimeZone, MaxTimeZoneLen}, {"overlap", s.Overlap, MaxOverlapLen},
		{"note", s.Note, MaxNoteLen}, {"owner", s.Owner, MaxOwnerLen},
	} {
		switch {
		case len(f.s) > f.max:
			return fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalid, f.name, f.max)
		case !utf8.ValidString(f.s):
			return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, f.name)
		}
	}
	return nil
}

// ValidateScheduleID reports whether id may name a stored schedule. The
// error wraps ErrInvalid.
func ValidateScheduleID(id string) error {
	return checkName("schedule id", id, MaxScheduleIDLen, true)
}

// SchedulePageSize returns the page size ListSchedules uses for size:
// DefaultSchedulePageSize for 0 or less, at most MaxSchedulePageSize.
func SchedulePageSize(size int) int {
	if size <= 0 {
		return DefaultSchedulePageSize
	}
	return min(size, MaxSchedulePageSize)
}

// Due reports whether s belongs in the index of due schedules: it is not
// paused and has a next tick.
func (s *Schedule) Due() bool { return !s.Paused && !s.NextTick.IsZero() }
