package schedule

import (
	"encoding/json"
	"fmt"
	"time"
)

// stateVersion is the version of State's encoding this package writes.
const stateVersion = 1

// storedState is State as stored: JSON with short, fixed names (they are
// the format, whatever the Go names become), times in RFC 3339 with
// nanoseconds (the zero time as "0001-01-01T00:00:00Z").
type storedState struct {
	V        int             `json:"v"`
	LastTick time.Time       `json:"last"`
	NextTick time.Time       `json:"next"`
	Buffered *storedRun      `json:"buffered,omitempty"`
	Running  []string        `json:"running,omitempty"`
	Recent   []storedOutcome `json:"recent,omitempty"`
	Started  uint64          `json:"started,omitempty"`
	Skipped  uint64          `json:"skipped,omitempty"`
	Missed   uint64          `json:"missed,omitempty"`
	Failed   uint64          `json:"failed,omitempty"`
}

type storedRun struct {
	Tick      time.Time `json:"tick"`
	HandlerID string    `json:"handler"`
}

type storedOutcome struct {
	Tick      time.Time   `json:"tick"`
	HandlerID string      `json:"handler,omitempty"`
	Kind      OutcomeKind `json:"kind"`
	Reason    string      `json:"reason,omitempty"`
	At        time.Time   `json:"at"`
}

// EncodeState returns the stored form of st (persistence.Schedule.State).
func EncodeState(st State) ([]byte, error) {
	m := storedState{V: stateVersion, LastTick: st.LastTick.UTC(), NextTick: st.NextTick.UTC(), Running: st.Running,
		Started: st.Started, Skipped: st.Skipped, Missed: st.Missed, Failed: st.Failed}
	if !st.Buffered.IsZero() {
		m.Buffered = &storedRun{Tick: st.Buffered.Tick.UTC(), HandlerID: st.Buffered.HandlerID}
	}
	for _, o := range st.Recent {
		m.Recent = append(m.Recent, storedOutcome{Tick: o.Tick.UTC(), HandlerID: o.HandlerID, Kind: o.Kind, Reason: o.Reason, At: o.At.UTC()})
	}
	b, err := json.Marshal(&m)
	if err != nil {
		return nil, fmt.Errorf("schedule: encode state: %w", err)
	}
	return b, nil
}

// DecodeState parses a stored state; nil or empty is the zero State (a
// schedule the scheduler never saw). A value that is not a state of a
// known version is an error: the schedule's state is lost, and the
// caller decides (start counting anew with NewState, or leave it).
func DecodeState(b []byte) (State, error) {
	if len(b) == 0 {
		return State{}, nil
	}
	var m storedState
	if err := json.Unmarshal(b, &m); err != nil {
		return State{}, fmt.Errorf("schedule: decode state: %w", err)
	}
	if m.V != stateVersion {
		return State{}, fmt.Errorf("schedule: decode state: unknown version %d", m.V)
	}
	st := State{LastTick: zeroUTC(m.LastTick), NextTick: zeroUTC(m.NextTick), Running: m.Running,
		Started: m.Started, Skipped: m.Skipped, Missed: m.Missed, Failed: m.Failed}
	if m.Buffered != nil {
		st.Buffered = Run{Tick: zeroUTC(m.Buffered.Tick), HandlerID: m.Buffered.HandlerID}
	}
	for _, o := range m.Recent {
		st.Recent = append(st.Recent, Outcome{Tick: zeroUTC(o.Tick), HandlerID: o.HandlerID, Kind: o.Kind, Reason: o.Reason, At: zeroUTC(o.At)})
	}
	return st, nil
}

// zeroUTC is t in UTC, and the zero time for the zero time.
func zeroUTC(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
