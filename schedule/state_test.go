package schedule_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/schedule"
)

func TestStateEncoding(t *testing.T) {
	full := schedule.State{
		LastTick: m(1), NextTick: m(2), Buffered: run(m(1)),
		Running: []string{hid(m(0)), hid(m(1))},
		Recent: []schedule.Outcome{
			{Tick: m(0), HandlerID: hid(m(0)), Kind: schedule.OutcomeStarted, At: m(0).Add(time.Second)},
			{Tick: m(1), Kind: schedule.OutcomeSkipped, Reason: "1 run(s) still run", At: m(1).Add(time.Nanosecond)},
		},
		Started: 1, Skipped: 2, Missed: 3, Failed: 4,
	}
	for _, st := range []schedule.State{full, {}, {LastTick: m(0)}} {
		b, err := schedule.EncodeState(st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := schedule.DecodeState(b)
		if err != nil || !reflect.DeepEqual(got, st) {
			t.Fatalf("DecodeState(%s) = %+v, %v; want %+v", b, got, err, st)
		}
	}
	if st, err := schedule.DecodeState(nil); err != nil || !reflect.DeepEqual(st, schedule.State{}) {
		t.Fatalf("DecodeState(nil) = %+v, %v; want the zero State", st, err)
	}
	for _, b := range []string{"{", `{"v":2}`, `{"last":"2026-01-01T00:00:00Z"}`, `{"v":1,"running":"x"}`} {
		if _, err := schedule.DecodeState([]byte(b)); err == nil {
			t.Errorf("DecodeState(%s) = nil error", b)
		}
	}
}

// TestStateBookkeeping: Recent keeps the latest MaxRecent outcomes,
// Prune drops the runs that ended, Fail turns a decided run into a
// failure.
func TestStateBookkeeping(t *testing.T) {
	s := minutely(schedule.OverlapAllow)
	for i := 1; i <= schedule.MaxRecent+10; i++ {
		d, err := schedule.Plan(s, m(i))
		if err != nil {
			t.Fatal(err)
		}
		s.State = d.State
	}
	st := s.State
	if len(st.Recent) != schedule.MaxRecent || st.Recent[0].Tick != m(11) || st.Recent[schedule.MaxRecent-1].Tick != m(60) {
		t.Fatalf("Recent: %d outcomes from %v to %v; want %d from %v to %v", len(st.Recent), st.Recent[0].Tick,
			st.Recent[len(st.Recent)-1].Tick, schedule.MaxRecent, m(11), m(60))
	}
	if st.Started != 60 || len(st.Running) != 60 {
		t.Fatalf("started %d, running %d; want 60 and 60", st.Started, len(st.Running))
	}

	ended := st.Prune(func(id string) bool { return id != hid(m(1)) && id != hid(m(2)) })
	if !slices.Equal(ended, []string{hid(m(1)), hid(m(2))}) || len(st.Running) != 58 || st.Running[0] != hid(m(3)) {
		t.Fatalf("Prune ended %v, left %d from %v", ended, len(st.Running), st.Running[0])
	}

	if !st.Fail(hid(m(3)), "workflow report is not registered", m(61)) || st.Fail("other", "x", m(61)) {
		t.Fatal("Fail of a running run = false, or of another = true")
	}
	last := st.Recent[len(st.Recent)-1]
	want := schedule.Outcome{Tick: m(3), HandlerID: hid(m(3)), Kind: schedule.OutcomeFailed, Reason: "workflow report is not registered", At: m(61)}
	if last != want || st.Failed != 1 || slices.Contains(st.Running, hid(m(3))) || len(st.Recent) != schedule.MaxRecent {
		t.Fatalf("after Fail: last outcome %+v, failed %d, running %v", last, st.Failed, fmt.Sprint(len(st.Running)))
	}
}

func TestNewState(t *testing.T) {
	st, err := schedule.NewState(schedule.Spec{Cron: "0 * * * *"}, m(1))
	if err != nil || !st.LastTick.Equal(m(1)) || !st.NextTick.Equal(m(60)) {
		t.Fatalf("NewState = %+v, %v; want counting from %v, next %v", st, err, m(1), m(60))
	}
	if _, err := schedule.NewState(schedule.Spec{}, m(1)); err == nil {
		t.Fatal("NewState of an empty spec = nil error")
	}
}
