package schedule_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/schedule"
)

func TestLoadAndInto(t *testing.T) {
	st, err := schedule.NewState(schedule.Spec{Cron: "0 12 * * *", TimeZone: "Europe/Berlin"}, m(0))
	if err != nil {
		t.Fatal(err)
	}
	enc, err := schedule.EncodeState(st)
	if err != nil {
		t.Fatal(err)
	}
	stored := persistence.Schedule{
		ID: "nightly", Cron: "0  12 * * *", TimeZone: "Europe/Berlin", Workflow: "report", Input: []byte(`{}`),
		Overlap: "buffer_one", CatchupWindow: time.Hour, Paused: true, Note: "n", State: enc, NextTick: st.NextTick, Revision: 7,
	}
	s, err := schedule.Load(stored)
	if err != nil {
		t.Fatal(err)
	}
	want := schedule.Schedule{ID: "nightly", Spec: schedule.Spec{Cron: "0  12 * * *", TimeZone: "Europe/Berlin"},
		Policy: schedule.Policy{Overlap: schedule.OverlapBufferOne, CatchupWindow: time.Hour}, Paused: true, State: st}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Load = %+v, want %+v", s, want)
	}

	d, err := schedule.Plan(schedule.Schedule{ID: s.ID, Spec: s.Spec, Policy: s.Policy, State: s.State}, st.NextTick)
	if err != nil || len(d.Start) != 1 {
		t.Fatalf("Plan at the next tick = %+v, %v", d, err)
	}
	s.State = d.State
	p := stored
	if err := s.Into(&p); err != nil {
		t.Fatal(err)
	}
	if p.Cron != "0 12 * * *" || p.Overlap != "buffer_one" || p.Workflow != "report" || p.Revision != 7 || !p.NextTick.Equal(d.State.NextTick) {
		t.Fatalf("Into = %+v", p)
	}
	back, err := schedule.Load(p)
	if err != nil || !reflect.DeepEqual(back.State, d.State) {
		t.Fatalf("Load after Into: %+v, %v; want state %+v", back.State, err, d.State)
	}

	bad := stored
	bad.Overlap = "sometimes"
	if _, err := schedule.Load(bad); !errors.Is(err, schedule.ErrInvalid) {
		t.Fatalf("Load with an unknown overlap policy = %v, want ErrInvalid", err)
	}
	bad = stored
	bad.State = []byte("{")
	if _, err := schedule.Load(bad); !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("Load with a damaged state = %v, want ErrCorrupt", err)
	}
	bad = stored
	bad.TimeZone = "Nowhere/Else"
	var se *schedule.SpecError
	if _, err := schedule.Load(bad); !errors.As(err, &se) {
		t.Fatalf("Load with an unknown time zone = %v, want a *SpecError", err)
	}
}

// TestPauseAndChange: a resumed schedule counts from the resume, and a
// new spec from its change: neither catches up on the ticks before.
func TestPauseAndChange(t *testing.T) {
	s := minutely(schedule.OverlapAllow)
	if err := s.SetPaused(true, m(0)); err != nil || !s.Paused {
		t.Fatal(err)
	}
	if err := s.SetPaused(false, m(30).Add(time.Second)); err != nil || s.Paused {
		t.Fatal(err)
	}
	if !s.State.LastTick.Equal(m(30).Add(time.Second)) || !s.State.NextTick.Equal(m(31)) {
		t.Fatalf("after resume: last %v next %v", s.State.LastTick, s.State.NextTick)
	}
	d, err := schedule.Plan(s, m(31))
	if err != nil || len(d.Start) != 1 || d.Start[0].Tick != m(31) || d.State.Missed != 0 {
		t.Fatalf("first plan after resume = %+v, %v; want only the tick at %v", d.Start, err, m(31))
	}

	s.State = d.State
	if err := s.SetSpec(schedule.Spec{Interval: time.Hour}, m(45)); err != nil {
		t.Fatal(err)
	}
	if !s.State.LastTick.Equal(m(45)) || !s.State.NextTick.Equal(m(60)) || s.Spec.Interval != time.Hour {
		t.Fatalf("after SetSpec: last %v next %v spec %+v", s.State.LastTick, s.State.NextTick, s.Spec)
	}
	if err := s.SetSpec(schedule.Spec{Cron: "61 * * * *"}, m(46)); err == nil || s.Spec.Interval != time.Hour {
		t.Fatalf("SetSpec with a bad spec = %v, spec now %+v", err, s.Spec)
	}
}
