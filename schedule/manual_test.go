package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/schedule"
)

func TestTrigger(t *testing.T) {
	now := m(0).Add(17 * time.Second)
	trig := schedule.TriggerHandlerID("s", now)
	paused := minutely(schedule.OverlapSkip)
	paused.Paused = true
	for _, c := range []struct {
		name    string
		s       schedule.Schedule
		kind    schedule.OutcomeKind
		started bool
		cancel  int
	}{
		{"nothing running", minutely(schedule.OverlapSkip), schedule.OutcomeStarted, true, 0},
		{"paused", paused, schedule.OutcomeStarted, true, 0},
		{"skip while running", minutely(schedule.OverlapSkip, "x"), schedule.OutcomeSkipped, false, 0},
		{"allow while running", minutely(schedule.OverlapAllow, "x"), schedule.OutcomeStarted, true, 0},
		{"cancel previous", minutely(schedule.OverlapCancelPrevious, "x"), schedule.OutcomeCancelledPrevious, true, 1},
		{"buffer one while running", minutely(schedule.OverlapBufferOne, "x"), schedule.OutcomeBuffered, false, 0},
	} {
		d, err := schedule.Trigger(c.s, now)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		o := d.Outcomes[0]
		switch {
		case len(d.Outcomes) != 1 || o.Kind != c.kind || o.Tick != now || o.At != now:
			t.Errorf("%s: outcomes %+v, want one %s at %v", c.name, d.Outcomes, c.kind, now)
		case c.started != (len(d.Start) == 1) || (c.started && d.Start[0] != schedule.Run{Tick: now, HandlerID: trig}):
			t.Errorf("%s: starts %v, want %v: %v", c.name, d.Start, c.started, trig)
		case len(d.Cancel) != c.cancel:
			t.Errorf("%s: cancels %v, want %d", c.name, d.Cancel, c.cancel)
		case !d.State.LastTick.Equal(m(0)) || !d.Changed:
			t.Errorf("%s: LastTick %v (want it where it was, %v), changed %v", c.name, d.State.LastTick, m(0), d.Changed)
		}
	}

	// A buffered trigger keeps its own handler id when it starts.
	d, err := schedule.Trigger(minutely(schedule.OverlapBufferOne, "x"), now)
	if err != nil {
		t.Fatal(err)
	}
	s := minutely(schedule.OverlapBufferOne)
	s.State = d.State
	s.State.Running = nil
	d, err = schedule.Plan(s, now.Add(time.Second))
	if err != nil || len(d.Start) != 1 || d.Start[0].HandlerID != trig {
		t.Fatalf("Plan after a buffered trigger: %v, %v; want the trigger's run %s", d.Start, err, trig)
	}
}

func TestBackfill(t *testing.T) {
	now := m(60)
	five := []time.Time{m(1), m(2), m(3), m(4), m(5)}
	for _, c := range []struct {
		name     string
		s        schedule.Schedule
		from, to time.Time
		start    []time.Time
		skipped  int
	}{
		{"allow", minutely(schedule.OverlapAllow), m(1), m(5), five, 0},
		{"bounds are inclusive", minutely(schedule.OverlapAllow), m(1), m(1), five[:1], 0},
		{"between ticks", minutely(schedule.OverlapAllow), m(1).Add(time.Second), m(5).Add(-time.Second), five[1:4], 0},
		{"skip", minutely(schedule.OverlapSkip), m(1), m(5), five[:1], 4},
		{"skip while running", minutely(schedule.OverlapSkip, "x"), m(1), m(5), nil, 5},
		{"cancel previous", minutely(schedule.OverlapCancelPrevious), m(1), m(5), five[4:], 4},
		{"the most", schedule.Schedule{ID: "s", Spec: schedule.Spec{Interval: time.Second}, Policy: schedule.Policy{Overlap: schedule.OverlapAllow},
			State: schedule.State{Running: ids(schedule.MaxRunning - 1)}}, m(1).Add(time.Second), m(1).Add(schedule.MaxBackfill * time.Second),
			[]time.Time{m(1).Add(time.Second)}, schedule.MaxBackfill - 1},
	} {
		d, err := schedule.Backfill(c.s, c.from, c.to, now)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var starts []time.Time
		for _, r := range d.Start {
			starts = append(starts, r.Tick)
			if r.HandlerID != hid(r.Tick) {
				t.Errorf("%s: backfilled run %v has id %s, want its tick's", c.name, r.Tick, r.HandlerID)
			}
		}
		if len(starts) != len(c.start) || (len(starts) > 0 && !starts[0].Equal(c.start[0])) ||
			int(d.State.Skipped-c.s.State.Skipped) != c.skipped || !d.State.LastTick.Equal(c.s.State.LastTick) {
			t.Errorf("%s: started %v, skipped %d, last %v; want %v, %d, unchanged", c.name, starts, d.State.Skipped, d.State.LastTick, c.start, c.skipped)
		}
	}

	s := schedule.Schedule{ID: "s", Spec: schedule.Spec{Interval: time.Second}}
	for _, c := range []struct {
		name     string
		from, to time.Time
	}{
		{"reversed", m(2), m(1)},
		{"in the future", m(1), now.Add(time.Second)},
		{"too many ticks", m(1), m(1).Add(schedule.MaxBackfill * time.Second)},
	} {
		if _, err := schedule.Backfill(s, c.from, c.to, now); !errors.Is(err, schedule.ErrInvalid) {
			t.Errorf("Backfill %s = %v, want ErrInvalid", c.name, err)
		}
	}
}
