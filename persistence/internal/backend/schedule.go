package backend

import (
	"bytes"
	"fmt"
	"time"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
	"github.com/wfd-dev/wfd/persistence/internal/pagetoken"
)

// PrepareSchedule checks a CreateSchedule or UpdateSchedule call (op,
// for errors: "create schedule") and returns what is stored: s with its
// times in UTC and its own copies of Input and State (the caller may
// reuse them once the call returns, and a transaction may run again).
// The Revision is the store's to set (EncodeSchedule).
func PrepareSchedule(op string, s persistence.Schedule) (persistence.Schedule, error) {
	if err := s.Validate(); err != nil {
		return persistence.Schedule{}, fmt.Errorf("%s: %w", op, err)
	}
	s.StartAt, s.EndAt, s.CreatedAt, s.UpdatedAt, s.NextTick =
		utc(s.StartAt), utc(s.EndAt), utc(s.CreatedAt), utc(s.UpdatedAt), utc(s.NextTick)
	s.Input, s.State = bytes.Clone(s.Input), bytes.Clone(s.State)
	s.Revision = 0
	return s, nil
}

// utc is t in UTC, the zero time kept as it is (t.UTC() of a zero time in
// another zone is not IsZero).
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// EncodeSchedule sets s's Revision to revision, the store's next one,
// and returns its stored form.
func EncodeSchedule(s *persistence.Schedule, revision uint64) ([]byte, error) {
	s.Revision = revision
	return codec.EncodeSchedule(s)
}

// CheckScheduleRevision is UpdateSchedule's condition: the stored
// schedule id has revision stored, and the writer read expect.
func CheckScheduleRevision(id string, stored, expect uint64) error {
	if stored != expect {
		return fmt.Errorf("%w: schedule %q has revision %d, not %d", persistence.ErrConflict, id, stored, expect)
	}
	return nil
}

// The page token of ListSchedules: a listing that is new in both
// backends at once, so it has one token format for both (unlike the
// older listings, whose backends issued tokens of their own first).
// The payload is the tag and the last id listed; the check also covers
// the listing's name.
const scheduleTokenTag byte = 'S'

// ScheduleToken returns the token of the page after the schedule lastID.
func ScheduleToken(lastID string) string {
	payload := append([]byte{scheduleTokenTag}, lastID...)
	return pagetoken.Seal(payload, scheduleTokenCheck(payload))
}

// ScheduleAfter returns the id after which the page token starts ("" for
// the first page). The error wraps persistence.ErrInvalid.
func ScheduleAfter(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	payload, err := pagetoken.Open(token, scheduleTokenTag, 2, scheduleTokenCheck)
	if err != nil {
		return "", err
	}
	return string(payload[1:]), nil
}

func scheduleTokenCheck(payload []byte) uint64 {
	return pagetoken.Check([]byte("schedules"), payload)
}
