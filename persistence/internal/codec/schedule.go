package codec

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// ScheduleVersion is the Schedule encoding version this package writes.
//
// A schedule is stored as a JSON object rather than a wfd.storage.v1
// message: the storage messages are generated from proto/internal, which
// the schedule work (issue 27) does not change in this step, and a JSON
// object with a version is as forward compatible (decoding ignores
// fields it does not know, so a later version can add some without a
// migration) and readable from psql or a bbolt dump, which helps with the
// few, small values schedules are. Moving to a message later is a new
// encoding version that Decode tells apart by its first byte.
const ScheduleVersion = 1

// storedSchedule is the stored form. Durations are nanoseconds, times
// RFC 3339 with nanoseconds in UTC ("" for the zero time), bytes base64
// (encoding/json's []byte). Field names are short and fixed: they are
// the format, whatever the Go names become.
type storedSchedule struct {
	V               int    `json:"v"`
	ID              string `json:"id"`
	Cron            string `json:"cron,omitempty"`
	TimeZone        string `json:"tz,omitempty"`
	Interval        int64  `json:"interval,omitempty"`
	Phase           int64  `json:"phase,omitempty"`
	StartAt         string `json:"start,omitempty"`
	EndAt           string `json:"end,omitempty"`
	Workflow        string `json:"workflow"`
	WorkflowVersion string `json:"version,omitempty"`
	Input           []byte `json:"input,omitempty"`
	Overlap         string `json:"overlap,omitempty"`
	CatchupWindow   int64  `json:"catchup,omitempty"`
	Paused          bool   `json:"paused,omitempty"`
	Note            string `json:"note,omitempty"`
	Owner           string `json:"owner,omitempty"`
	CreatedAt       string `json:"created,omitempty"`
	UpdatedAt       string `json:"updated,omitempty"`
	NextTick        string `json:"next,omitempty"`
	State           []byte `json:"state,omitempty"`
	Revision        uint64 `json:"rev"`
}

// EncodeSchedule returns the stored form of s. It does not validate s.
func EncodeSchedule(s *persistence.Schedule) ([]byte, error) {
	m := storedSchedule{
		V: ScheduleVersion, ID: s.ID,
		Cron: s.Cron, TimeZone: s.TimeZone, Interval: int64(s.Interval), Phase: int64(s.Phase),
		StartAt: jsonTime(s.StartAt), EndAt: jsonTime(s.EndAt),
		Workflow: s.Workflow, WorkflowVersion: s.WorkflowVersion, Input: s.Input,
		Overlap: s.Overlap, CatchupWindow: int64(s.CatchupWindow),
		Paused: s.Paused, Note: s.Note, Owner: s.Owner,
		CreatedAt: jsonTime(s.CreatedAt), UpdatedAt: jsonTime(s.UpdatedAt),
		NextTick: jsonTime(s.NextTick), State: s.State, Revision: s.Revision,
	}
	// encoding/json writes struct fields in order: equal schedules encode
	// to equal bytes.
	b, err := json.Marshal(&m)
	if err != nil {
		return nil, fmt.Errorf("encode schedule %q: %w", s.ID, err)
	}
	return b, nil
}

// DecodeSchedule parses the stored form of a schedule. A value that is
// not a schedule of a known version that CreateSchedule would accept
// fails with an error wrapping persistence.ErrCorrupt: the index of due
// schedules is derived from it. It never panics.
func DecodeSchedule(b []byte) (persistence.Schedule, error) {
	var m storedSchedule
	if err := json.Unmarshal(b, &m); err != nil {
		return persistence.Schedule{}, fmt.Errorf("%w: schedule: %w", persistence.ErrCorrupt, err)
	}
	if m.V != ScheduleVersion {
		return persistence.Schedule{}, fmt.Errorf("%w: schedule: unknown version %d", persistence.ErrCorrupt, m.V)
	}
	s := persistence.Schedule{
		ID: m.ID, Cron: m.Cron, TimeZone: m.TimeZone,
		Interval: time.Duration(m.Interval), Phase: time.Duration(m.Phase),
		Workflow: m.Workflow, WorkflowVersion: m.WorkflowVersion, Input: m.Input,
		Overlap: m.Overlap, CatchupWindow: time.Duration(m.CatchupWindow),
		Paused: m.Paused, Note: m.Note, Owner: m.Owner, State: m.State, Revision: m.Revision,
	}
	for _, f := range []struct {
		name string
		raw  string
		t    *time.Time
	}{
		{"start", m.StartAt, &s.StartAt}, {"end", m.EndAt, &s.EndAt}, {"created", m.CreatedAt, &s.CreatedAt},
		{"updated", m.UpdatedAt, &s.UpdatedAt}, {"next", m.NextTick, &s.NextTick},
	} {
		t, err := parseJSONTime(f.raw)
		if err != nil {
			return persistence.Schedule{}, fmt.Errorf("%w: schedule %q: %s: %w", persistence.ErrCorrupt, m.ID, f.name, err)
		}
		*f.t = t
	}
	if err := s.Validate(); err != nil {
		return persistence.Schedule{}, fmt.Errorf("%w: schedule: %w", persistence.ErrCorrupt, err)
	}
	return s, nil
}

// DecodeStoredSchedule decodes the schedule stored under id.
func DecodeStoredSchedule(id string, raw []byte) (persistence.Schedule, error) {
	s, err := DecodeSchedule(raw)
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("schedule %q: %w", id, err)
	}
	if s.ID != id {
		return persistence.Schedule{}, fmt.Errorf("schedule %q: %w: value names schedule %q", id, persistence.ErrCorrupt, s.ID)
	}
	return s, nil
}

// jsonTime is t in RFC 3339 with nanoseconds, in UTC; "" for the zero
// time, so that "not set" survives a round trip.
func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseJSONTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}
