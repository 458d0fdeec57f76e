package schedule_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/schedule"
)

// m is the planning tests' reference time, a tick of every minutely
// spec, plus n minutes.
func m(n int) time.Time {
	return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute)
}

func hid(tick time.Time) string { return schedule.HandlerID("s", tick) }

func run(tick time.Time) schedule.Run { return schedule.Run{Tick: tick, HandlerID: hid(tick)} }

// minutely is a schedule "s" firing every minute, last ticked at m(0).
func minutely(overlap schedule.Overlap, running ...string) schedule.Schedule {
	return schedule.Schedule{
		ID:     "s",
		Spec:   schedule.Spec{Cron: "* * * * *"},
		Policy: schedule.Policy{Overlap: overlap},
		State:  schedule.State{LastTick: m(0), NextTick: m(1), Running: running},
	}
}

// want is what a test expects of a Decision.
type want struct {
	start    []time.Time
	cancel   []string
	kinds    []schedule.OutcomeKind
	last     time.Time
	next     time.Time
	buffered time.Time
	running  int
	counts   [4]uint64 // started, skipped, missed, failed
	changed  bool
}

func check(t *testing.T, name string, d schedule.Decision, w want) {
	t.Helper()
	var starts []time.Time
	for _, r := range d.Start {
		starts = append(starts, r.Tick)
		if r.HandlerID != hid(r.Tick) && !strings.Contains(r.HandlerID, ":trigger:") {
			t.Errorf("%s: run of %v has handler id %q", name, r.Tick, r.HandlerID)
		}
	}
	var kinds []schedule.OutcomeKind
	for _, o := range d.Outcomes {
		kinds = append(kinds, o.Kind)
	}
	st := d.State
	got := fmt.Sprintf("start %v cancel %v kinds %v last %v next %v buffered %v running %d counts %v changed %v",
		starts, d.Cancel, kinds, st.LastTick, st.NextTick, st.Buffered.Tick, len(st.Running),
		[4]uint64{st.Started, st.Skipped, st.Missed, st.Failed}, d.Changed)
	exp := fmt.Sprintf("start %v cancel %v kinds %v last %v next %v buffered %v running %d counts %v changed %v",
		w.start, w.cancel, w.kinds, w.last, w.next, w.buffered, w.running, w.counts, w.changed)
	if got != exp {
		t.Errorf("%s:\n got %s\nwant %s", name, got, exp)
	}
}

func TestPlanOverlap(t *testing.T) {
	started, skipped, buffered := schedule.OutcomeStarted, schedule.OutcomeSkipped, schedule.OutcomeBuffered
	bufferedOne := minutely(schedule.OverlapBufferOne, "x")
	bufferedOne.State.Buffered = run(m(1))
	bufferedOne.State.LastTick, bufferedOne.State.NextTick = m(1), m(1)
	drained := bufferedOne
	drained.State.Running = nil
	for _, c := range []struct {
		name string
		s    schedule.Schedule
		now  time.Time
		want want
	}{
		{"on time", minutely(schedule.OverlapSkip), m(1),
			want{start: []time.Time{m(1)}, kinds: []schedule.OutcomeKind{started}, last: m(1), next: m(2), running: 1, counts: [4]uint64{1, 0, 0, 0}, changed: true}},
		{"late within the window", minutely(schedule.OverlapSkip), m(1).Add(59 * time.Second),
			want{start: []time.Time{m(1)}, kinds: []schedule.OutcomeKind{started}, last: m(1), next: m(2), running: 1, counts: [4]uint64{1, 0, 0, 0}, changed: true}},
		{"nothing due", minutely(schedule.OverlapSkip), m(1).Add(-time.Nanosecond),
			want{last: m(0), next: m(1)}},
		{"skip while running", minutely(schedule.OverlapSkip, "x"), m(1),
			want{kinds: []schedule.OutcomeKind{skipped}, last: m(1), next: m(2), running: 1, counts: [4]uint64{0, 1, 0, 0}, changed: true}},
		{"buffer one while running", minutely(schedule.OverlapBufferOne, "x"), m(1),
			want{kinds: []schedule.OutcomeKind{buffered}, last: m(1), next: m(1), buffered: m(1), running: 1, changed: true}},
		{"buffer full", bufferedOne, m(2),
			want{kinds: []schedule.OutcomeKind{skipped}, last: m(2), next: m(1), buffered: m(1), running: 1, counts: [4]uint64{0, 1, 0, 0}, changed: true}},
		{"buffered, still running, nothing due", bufferedOne, m(1).Add(30 * time.Second),
			want{last: m(1), next: m(1), buffered: m(1), running: 1}},
		{"buffered starts once nothing runs", drained, m(1).Add(30 * time.Second),
			want{start: []time.Time{m(1)}, kinds: []schedule.OutcomeKind{started}, last: m(1), next: m(2), running: 1, counts: [4]uint64{1, 0, 0, 0}, changed: true}},
		{"buffered starts, then the next tick waits", drained, m(2),
			want{start: []time.Time{m(1)}, kinds: []schedule.OutcomeKind{started, buffered}, last: m(2), next: m(2), buffered: m(2), running: 1, counts: [4]uint64{1, 0, 0, 0}, changed: true}},
		{"allow while running", minutely(schedule.OverlapAllow, "x", "y"), m(1),
			want{start: []time.Time{m(1)}, kinds: []schedule.OutcomeKind{started}, last: m(1), next: m(2), running: 3, counts: [4]uint64{1, 0, 0, 0}, changed: true}},
		{"allow up to MaxRunning", minutely(schedule.OverlapAllow, ids(schedule.MaxRunning)...), m(1),
			want{kinds: []schedule.OutcomeKind{skipped}, last: m(1), next: m(2), running: schedule.MaxRunning, counts: [4]uint64{0, 1, 0, 0}, changed: true}},
		{"cancel previous", minutely(schedule.OverlapCancelPrevious, "x", "y"), m(1),
			want{start: []time.Time{m(1)}, cancel: []string{"x", "y"}, kinds: []schedule.OutcomeKind{schedule.OutcomeCancelledPrevious},
				last: m(1), next: m(2), running: 3, counts: [4]uint64{1, 0, 0, 0}, changed: true}},
		{"cancel previous, nothing running", minutely(schedule.OverlapCancelPrevious), m(1),
			want{start: []time.Time{m(1)}, kinds: []schedule.OutcomeKind{started}, last: m(1), next: m(2), running: 1, counts: [4]uint64{1, 0, 0, 0}, changed: true}},
	} {
		before := fmt.Sprint(c.s.State)
		d, err := schedule.Plan(c.s, c.now)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		check(t, c.name, d, c.want)
		if after := fmt.Sprint(c.s.State); after != before {
			t.Errorf("%s: Plan changed the state it was given: %s, was %s", c.name, after, before)
		}
	}
}

// ids returns n handler ids.
func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("run-", i)
	}
	return out
}

// TestPlanCatchup: the scheduler comes back 10 minutes after m(0). Ticks
// older than the catch-up window are missed (counted, one outcome); those
// within it are decided in order, each policy its way.
func TestPlanCatchup(t *testing.T) {
	started, skipped, missed := schedule.OutcomeStarted, schedule.OutcomeSkipped, schedule.OutcomeMissed
	withWindow := func(s schedule.Schedule, w time.Duration) schedule.Schedule {
		s.Policy.CatchupWindow = w
		return s
	}
	now := m(10)
	for _, c := range []struct {
		name string
		s    schedule.Schedule
		want want
	}{
		// The default window, a minute: 1 to 8 are missed, 9 and 10 due.
		{"skip", minutely(schedule.OverlapSkip), want{start: []time.Time{m(9)}, kinds: []schedule.OutcomeKind{missed, started, skipped},
			last: m(10), next: m(11), running: 1, counts: [4]uint64{1, 1, 8, 0}, changed: true}},
		{"allow", minutely(schedule.OverlapAllow), want{start: []time.Time{m(9), m(10)}, kinds: []schedule.OutcomeKind{missed, started, started},
			last: m(10), next: m(11), running: 2, counts: [4]uint64{2, 0, 8, 0}, changed: true}},
		{"buffer one", minutely(schedule.OverlapBufferOne), want{start: []time.Time{m(9)},
			kinds: []schedule.OutcomeKind{missed, started, schedule.OutcomeBuffered},
			last:  m(10), next: m(10), buffered: m(10), running: 1, counts: [4]uint64{1, 0, 8, 0}, changed: true}},
		{"cancel previous", minutely(schedule.OverlapCancelPrevious, "x"), want{start: []time.Time{m(10)}, cancel: []string{"x"},
			kinds: []schedule.OutcomeKind{missed, skipped, schedule.OutcomeCancelledPrevious},
			last:  m(10), next: m(11), running: 2, counts: [4]uint64{1, 1, 8, 0}, changed: true}},
		{"wider window", withWindow(minutely(schedule.OverlapAllow), 3*time.Minute), want{start: []time.Time{m(7), m(8), m(9), m(10)},
			kinds: []schedule.OutcomeKind{missed, started, started, started, started},
			last:  m(10), next: m(11), running: 4, counts: [4]uint64{4, 0, 6, 0}, changed: true}},
		{"window wider than the downtime", withWindow(minutely(schedule.OverlapSkip), time.Hour), want{start: []time.Time{m(1)},
			kinds: append([]schedule.OutcomeKind{started}, slices.Repeat([]schedule.OutcomeKind{skipped}, 9)...),
			last:  m(10), next: m(11), running: 1, counts: [4]uint64{1, 9, 0, 0}, changed: true}},
		{"one missed", withWindow(minutely(schedule.OverlapSkip), 8*time.Minute+30*time.Second), want{start: []time.Time{m(2)},
			kinds: append([]schedule.OutcomeKind{missed, started}, slices.Repeat([]schedule.OutcomeKind{skipped}, 8)...),
			last:  m(10), next: m(11), running: 1, counts: [4]uint64{1, 8, 1, 0}, changed: true}},
	} {
		d, err := schedule.Plan(c.s, now)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		check(t, c.name, d, c.want)
	}

	d, err := schedule.Plan(minutely(schedule.OverlapSkip), now)
	if err != nil {
		t.Fatal(err)
	}
	o := d.Outcomes[0]
	if want := "8 ticks from 2026-11-28T12:01:00Z to 2026-11-28T12:08:00Z were older than the catch-up window (1m0s) when the scheduler came to it"; o.Tick != m(8) || o.HandlerID != "" || o.Reason != want || o.At != now {
		t.Fatalf("missed outcome = %+v, want tick %v and reason %q", o, m(8), want)
	}
}

func TestPlanStates(t *testing.T) {
	paused := minutely(schedule.OverlapAllow)
	paused.Paused = true
	pausedBuffered := paused
	pausedBuffered.State.Buffered = run(m(0))
	fresh := minutely(schedule.OverlapSkip)
	fresh.State = schedule.State{}
	ending := minutely(schedule.OverlapSkip)
	ending.Spec.End = m(1)
	ended := ending
	ended.State.LastTick, ended.State.NextTick = m(1), time.Time{}
	interval := minutely(schedule.OverlapSkip)
	interval.Spec = schedule.Spec{Interval: time.Hour, Phase: 30 * time.Minute}
	for _, c := range []struct {
		name string
		s    schedule.Schedule
		now  time.Time
		want want
	}{
		// Ticks of a pause are passed over, not recorded.
		{"paused", paused, m(10), want{last: m(10), next: m(11), changed: true}},
		{"paused keeps its buffer", pausedBuffered, m(10), want{last: m(10), next: m(0), buffered: m(0), changed: true}},
		{"never counted", fresh, m(10).Add(time.Second), want{last: m(10).Add(time.Second), next: m(11), changed: true}},
		{"last tick", ending, m(1).Add(30 * time.Second), want{start: []time.Time{m(1)}, kinds: []schedule.OutcomeKind{schedule.OutcomeStarted},
			last: m(1), running: 1, counts: [4]uint64{1, 0, 0, 0}, changed: true}},
		{"ended", ended, m(5), want{last: m(1)}},
		{"interval", interval, m(30), want{start: []time.Time{m(30)}, kinds: []schedule.OutcomeKind{schedule.OutcomeStarted},
			last: m(30), next: m(90), running: 1, counts: [4]uint64{1, 0, 0, 0}, changed: true}},
	} {
		d, err := schedule.Plan(c.s, c.now)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		check(t, c.name, d, c.want)
	}
}

// TestPlanBounded: a pass decides at most MaxTicksPerPass ticks (the rest
// stay due) and counts at most MaxMissedCounted missed ones.
func TestPlanBounded(t *testing.T) {
	s := schedule.Schedule{ID: "s", Spec: schedule.Spec{Interval: time.Second},
		Policy: schedule.Policy{Overlap: schedule.OverlapSkip, CatchupWindow: time.Hour},
		State:  schedule.State{LastTick: m(0)}}
	now := m(0).Add(time.Hour)
	d, err := schedule.Plan(s, now)
	if err != nil {
		t.Fatal(err)
	}
	last := m(0).Add(schedule.MaxTicksPerPass * time.Second)
	if st := d.State; len(d.Outcomes) != schedule.MaxTicksPerPass || !st.LastTick.Equal(last) || !st.NextTick.Equal(last.Add(time.Second)) ||
		st.Started != 1 || st.Skipped != schedule.MaxTicksPerPass-1 {
		t.Fatalf("first pass: %d outcomes, last %v next %v, started %d skipped %d; want %d, %v", len(d.Outcomes), st.LastTick, st.NextTick,
			st.Started, st.Skipped, schedule.MaxTicksPerPass, last)
	}
	if len(d.State.Recent) != schedule.MaxRecent || d.State.Recent[schedule.MaxRecent-1].Tick != last {
		t.Fatalf("Recent has %d outcomes, the last %v; want %d, the last %v", len(d.State.Recent), d.State.Recent[len(d.State.Recent)-1].Tick, schedule.MaxRecent, last)
	}

	s.Policy.CatchupWindow = time.Minute
	s.State.LastTick = m(0).Add(-24 * time.Hour)
	d, err = schedule.Plan(s, m(0))
	if err != nil {
		t.Fatal(err)
	}
	o := d.Outcomes[0]
	if d.State.Missed != schedule.MaxMissedCounted || o.Kind != schedule.OutcomeMissed || !strings.Contains(o.Reason, "and more") {
		t.Fatalf("missed %d, outcome %+v; want %d and a reason that says more", d.State.Missed, o, schedule.MaxMissedCounted)
	}
	// The ticks in the window, 61 with both ends, are decided: the first
	// started, the others skipped.
	if d.State.Started != 1 || d.State.Skipped != 60 || !d.State.LastTick.Equal(m(0)) {
		t.Fatalf("after many missed: started %d skipped %d last %v; want 1, 60, %v", d.State.Started, d.State.Skipped, d.State.LastTick, m(0))
	}
}

func TestPlanRefuses(t *testing.T) {
	for _, s := range []schedule.Schedule{
		{ID: "bad id", Spec: schedule.Spec{Cron: "@daily"}},
		{ID: "s", Spec: schedule.Spec{Cron: "@every 1h"}},
		{ID: "s", Spec: schedule.Spec{Cron: "@daily"}, Policy: schedule.Policy{Overlap: 9}},
		{ID: "s", Spec: schedule.Spec{Cron: "@daily"}, Policy: schedule.Policy{CatchupWindow: -1}},
	} {
		if _, err := schedule.Plan(s, m(0)); err == nil {
			t.Errorf("Plan(%+v) = nil error", s)
		}
	}
}
