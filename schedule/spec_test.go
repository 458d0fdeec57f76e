package schedule_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/schedule"
)

// at parses an RFC 3339 time.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// inZone is the wall time s (2006-01-02 15:04) in zone.
func inZone(t testing.TB, zone, s string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseSpecErrors(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		spec  schedule.Spec
		field int
		want  string
	}{
		{schedule.Spec{Cron: "* 25 * * *"}, 2, "cron field 2 (hour): 25 out of range 0-23"},
		{schedule.Spec{Cron: "60 * * * *"}, 1, "cron field 1 (minute): 60 out of range 0-59"},
		{schedule.Spec{Cron: "0 0 0 * *"}, 3, "cron field 3 (day of month): 0 out of range 1-31"},
		{schedule.Spec{Cron: "0 0 * 13 *"}, 4, "cron field 4 (month): 13 out of range 1-12"},
		{schedule.Spec{Cron: "0 0 * * 7"}, 5, "cron field 5 (day of week): 7 out of range 0-6"},
		{schedule.Spec{Cron: "0 0 * foo *"}, 4, `cron field 4 (month): "foo" is neither a number nor a name (jan-dec)`},
		{schedule.Spec{Cron: "0 0 * * mon-sun"}, 5, "cron field 5 (day of week): range mon-sun goes backwards"},
		{schedule.Spec{Cron: "*/0 * * * *"}, 1, `cron field 1 (minute): step "0" in "*/0" is not a positive number`},
		{schedule.Spec{Cron: "0 */x * * *"}, 2, `cron field 2 (hour): step "x" in "*/x" is not a positive number`},
		{schedule.Spec{Cron: "1,,2 * * * *"}, 1, `cron field 1 (minute): "1,,2" has an empty list item`},
		{schedule.Spec{Cron: "1-2-3 * * * *"}, 1, `cron field 1 (minute): "1-2-3" has more than one -`},
		{schedule.Spec{Cron: "*/5/2 * * * *"}, 1, `cron field 1 (minute): "*/5/2" has more than one /`},
		{schedule.Spec{Cron: "*-5 * * * *"}, 1, `cron field 1 (minute): "*-5": * stands alone, not in a range`},
		{schedule.Spec{Cron: "5- * * * *"}, 1, `cron field 1 (minute): "5-" has a range with a missing end`},
		{schedule.Spec{Cron: "0 0 +1 * *"}, 3, `cron field 3 (day of month): "+1" is not a number`},
		{schedule.Spec{Cron: "0 0 99999999999999999999 * *"}, 3, "cron field 3 (day of month): 99999999999999999999 out of range 1-31"},
		{schedule.Spec{Cron: "0 0 30 2 *"}, 3, "cron field 3 (day of month): no month selected has such a day: the expression never fires"},
		{schedule.Spec{Cron: "* * * *"}, 0, "cron: 4 fields, want 5: minute, hour, day of month, month, day of week"},
		{schedule.Spec{Cron: "0 * * * * *"}, 0, "cron: 6 fields, want 5: minute, hour, day of month, month, day of week"},
		{schedule.Spec{Cron: "   "}, 0, "cron: the expression is blank"},
		{schedule.Spec{Cron: "@every 1h"}, 0, "cron: @every is not taken: give an interval instead of a cron expression"},
		{schedule.Spec{Cron: "@fortnightly"}, 0, `cron: unknown descriptor "@fortnightly" (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)`},
		{schedule.Spec{Cron: "@daily 1"}, 0, `cron: unknown descriptor "@daily 1" (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)`},
		// The parser panics on this one: it never reaches it.
		{schedule.Spec{Cron: "CRON_TZ=UTC"}, 0, "cron: give the time zone apart, not as CRON_TZ=UTC in the expression"},
		{schedule.Spec{Cron: "TZ=UTC 0 * * * *"}, 0, "cron: give the time zone apart, not as TZ=UTC in the expression"},
		{schedule.Spec{Cron: strings.Repeat("1,", 200) + "1 * * * *"}, 0, "cron: the expression is longer than 256 bytes"},
		{schedule.Spec{Cron: "0 * * * *", TimeZone: "Mars/Olympus_Mons"}, 0, `time zone: unknown time zone "Mars/Olympus_Mons"`},
		{schedule.Spec{Cron: "0 * * * *", TimeZone: "Local"}, 0, `time zone: "Local" is not an IANA time zone name`},
		{schedule.Spec{Cron: "0 * * * *", TimeZone: " UTC"}, 0, `time zone: " UTC" is not an IANA time zone name`},
		{schedule.Spec{Cron: "0 * * * *", Phase: time.Second}, 0, "phase: only an interval has one"},
		{schedule.Spec{Cron: "0 * * * *", Interval: time.Hour}, 0, "spec: either a cron expression or an interval, not both"},
		{schedule.Spec{}, 0, "spec: a cron expression or an interval is required"},
		{schedule.Spec{Interval: 500 * time.Millisecond}, 0, "interval: 500ms is shorter than 1s"},
		{schedule.Spec{Interval: 1500 * time.Millisecond}, 0, "interval: 1.5s is not a whole number of seconds"},
		{schedule.Spec{Interval: -time.Hour}, 0, "interval: -1h0m0s is shorter than 1s"},
		{schedule.Spec{Interval: schedule.MaxInterval + time.Second}, 0, "interval: 87600h0m1s is longer than 87600h0m0s"},
		{schedule.Spec{Interval: time.Hour, Phase: time.Hour}, 0, "phase: 1h0m0s is not between 0 and the interval 1h0m0s"},
		{schedule.Spec{Interval: time.Hour, Phase: -time.Second}, 0, "phase: -1s is not between 0 and the interval 1h0m0s"},
		{schedule.Spec{Interval: time.Hour, Phase: time.Millisecond}, 0, "phase: 1ms is not a whole number of seconds"},
		{schedule.Spec{Interval: time.Hour, TimeZone: "UTC"}, 0, "time zone: an interval has none (its ticks are instants); leave it empty"},
		{schedule.Spec{Interval: time.Hour, Start: start, End: start.Add(-time.Second)}, 0,
			"end: 2025-12-31T23:59:59Z is before the start 2026-01-01T00:00:00Z"},
	} {
		_, err := schedule.ParseSpec(c.spec)
		var se *schedule.SpecError
		switch {
		case !errors.As(err, &se):
			t.Errorf("ParseSpec(%+v) = %v, want a *SpecError", c.spec, err)
		case err.Error() != c.want || se.Field != c.field:
			t.Errorf("ParseSpec(%+v) = %q (field %d), want %q (field %d)", c.spec, err, se.Field, c.want, c.field)
		case !errors.Is(err, schedule.ErrInvalid):
			t.Errorf("ParseSpec(%+v) = %v, does not wrap ErrInvalid", c.spec, err)
		case c.spec.Validate() == nil:
			t.Errorf("Validate(%+v) = nil, ParseSpec refused it", c.spec)
		}
	}
}

func TestParseSpecNormalizes(t *testing.T) {
	berlin := inZone(t, "Europe/Berlin", "2026-06-01 12:00")
	for _, c := range []struct{ in, want schedule.Spec }{
		{schedule.Spec{Cron: " 0  12\t* *  MON-fri "}, schedule.Spec{Cron: "0 12 * * MON-fri", TimeZone: "UTC"}},
		{schedule.Spec{Cron: "@daily", TimeZone: "Europe/Berlin"}, schedule.Spec{Cron: "@daily", TimeZone: "Europe/Berlin"}},
		{schedule.Spec{Interval: time.Hour, Phase: time.Minute, Start: berlin},
			schedule.Spec{Interval: time.Hour, Phase: time.Minute, Start: berlin.UTC()}},
		{schedule.Spec{Cron: "0,30 9-17/2 1-15 jan,JUL ?"}, schedule.Spec{Cron: "0,30 9-17/2 1-15 jan,JUL ?", TimeZone: "UTC"}},
	} {
		got, err := schedule.ParseSpec(c.in)
		if err != nil || got != c.want || got.Start.Location() != time.UTC {
			t.Errorf("ParseSpec(%+v) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if again, err := schedule.ParseSpec(got); err != nil || again != got {
			t.Errorf("ParseSpec of its own result %+v = %+v, %v", got, again, err)
		}
	}
}

func TestNext(t *testing.T) {
	hourly := schedule.Spec{Interval: time.Hour, Phase: 15 * time.Minute}
	ended := hourly
	ended.End = at(t, "2026-11-28T14:15:00Z")
	started := hourly
	started.Start = at(t, "2026-11-28T14:15:00Z")
	for _, c := range []struct {
		name  string
		spec  schedule.Spec
		after time.Time
		want  []time.Time // the next ticks, at most 4
	}{
		{"cron in UTC", schedule.Spec{Cron: "0 12 * * *"}, at(t, "2026-11-28T11:00:00Z"),
			[]time.Time{at(t, "2026-11-28T12:00:00Z"), at(t, "2026-11-29T12:00:00Z"), at(t, "2026-11-30T12:00:00Z"), at(t, "2026-12-01T12:00:00Z")}},
		{"after a tick, not that tick", schedule.Spec{Cron: "0 12 * * *"}, at(t, "2026-11-28T12:00:00Z"),
			[]time.Time{at(t, "2026-11-29T12:00:00Z"), at(t, "2026-11-30T12:00:00Z"), at(t, "2026-12-01T12:00:00Z"), at(t, "2026-12-02T12:00:00Z")}},
		{"weekdays in Berlin", schedule.Spec{Cron: "0 9 * * MON-FRI", TimeZone: "Europe/Berlin"}, at(t, "2026-11-27T09:00:00Z"),
			[]time.Time{at(t, "2026-11-30T08:00:00Z"), at(t, "2026-12-01T08:00:00Z"), at(t, "2026-12-02T08:00:00Z"), at(t, "2026-12-03T08:00:00Z")}},
		{"descriptor in Tokyo", schedule.Spec{Cron: "@daily", TimeZone: "Asia/Tokyo"}, at(t, "2026-11-28T12:00:00Z"),
			[]time.Time{at(t, "2026-11-28T15:00:00Z"), at(t, "2026-11-29T15:00:00Z"), at(t, "2026-11-30T15:00:00Z"), at(t, "2026-12-01T15:00:00Z")}},
		// Clocks go from 2:00 to 3:00 on 8 March 2026 in New York: no
		// 2:30 that day.
		{"DST gap skips the day", schedule.Spec{Cron: "30 2 * * *", TimeZone: "America/New_York"}, inZone(t, "America/New_York", "2026-03-07 12:00"),
			[]time.Time{at(t, "2026-03-09T06:30:00Z"), at(t, "2026-03-10T06:30:00Z"), at(t, "2026-03-11T06:30:00Z"), at(t, "2026-03-12T06:30:00Z")}},
		{"DST gap, hourly", schedule.Spec{Cron: "0 * * * *", TimeZone: "America/New_York"}, inZone(t, "America/New_York", "2026-03-08 00:30"),
			[]time.Time{at(t, "2026-03-08T06:00:00Z"), at(t, "2026-03-08T07:00:00Z"), at(t, "2026-03-08T08:00:00Z"), at(t, "2026-03-08T09:00:00Z")}},
		// Clocks go back from 2:00 to 1:00 on 1 November 2026: 1:30
		// comes twice, an hour apart.
		{"DST repeat fires twice", schedule.Spec{Cron: "30 1 * * *", TimeZone: "America/New_York"}, inZone(t, "America/New_York", "2026-10-31 12:00"),
			[]time.Time{at(t, "2026-11-01T05:30:00Z"), at(t, "2026-11-01T06:30:00Z"), at(t, "2026-11-02T06:30:00Z"), at(t, "2026-11-03T06:30:00Z")}},
		{"interval with phase", hourly, at(t, "2026-11-28T12:20:00Z"),
			[]time.Time{at(t, "2026-11-28T13:15:00Z"), at(t, "2026-11-28T14:15:00Z"), at(t, "2026-11-28T15:15:00Z"), at(t, "2026-11-28T16:15:00Z")}},
		{"interval from the epoch", schedule.Spec{Interval: 90 * time.Second}, time.Unix(0, 0),
			[]time.Time{time.Unix(90, 0).UTC(), time.Unix(180, 0).UTC(), time.Unix(270, 0).UTC(), time.Unix(360, 0).UTC()}},
		{"before the epoch", schedule.Spec{Interval: 90 * time.Second}, at(t, "1900-01-01T00:00:00Z"),
			[]time.Time{time.Unix(0, 0).UTC(), time.Unix(90, 0).UTC(), time.Unix(180, 0).UTC(), time.Unix(270, 0).UTC()}},
		{"interval up to its end", ended, at(t, "2026-11-28T12:20:00Z"),
			[]time.Time{at(t, "2026-11-28T13:15:00Z"), at(t, "2026-11-28T14:15:00Z")}},
		{"interval from its start", started, at(t, "2026-11-28T00:00:00Z"),
			[]time.Time{at(t, "2026-11-28T14:15:00Z"), at(t, "2026-11-28T15:15:00Z"), at(t, "2026-11-28T16:15:00Z"), at(t, "2026-11-28T17:15:00Z")}},
		{"cron past its end", schedule.Spec{Cron: "@hourly", End: at(t, "2026-01-01T00:00:00Z")}, at(t, "2026-01-01T00:00:00Z"), nil},
		// February 29th of 2100 does not exist: the next is 2104's, more
		// than the parser's five years away.
		{"rare date", schedule.Spec{Cron: "0 0 29 2 *"}, at(t, "2097-03-01T00:00:00Z"),
			[]time.Time{at(t, "2104-02-29T00:00:00Z"), at(t, "2108-02-29T00:00:00Z"), at(t, "2112-02-29T00:00:00Z"), at(t, "2116-02-29T00:00:00Z")}},
		{"up to MaxYear", schedule.Spec{Cron: "@yearly"}, at(t, "2197-06-01T00:00:00Z"),
			[]time.Time{at(t, "2198-01-01T00:00:00Z"), at(t, "2199-01-01T00:00:00Z")}},
		{"nanoseconds after", schedule.Spec{Interval: time.Minute}, at(t, "2026-11-28T12:00:00Z").Add(time.Nanosecond),
			[]time.Time{at(t, "2026-11-28T12:01:00Z"), at(t, "2026-11-28T12:02:00Z"), at(t, "2026-11-28T12:03:00Z"), at(t, "2026-11-28T12:04:00Z")}},
	} {
		var got []time.Time
		for next := c.after; len(got) < 4; {
			if next = c.spec.Next(next); next.IsZero() {
				break
			}
			got = append(got, next)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: ticks after %v = %v, want %v", c.name, c.after, got, c.want)
		}
		for _, tick := range got {
			if tick.Location() != time.UTC {
				t.Errorf("%s: tick %v is not in UTC", c.name, tick)
			}
		}
		if ticks := c.spec.Ticks(c.after, at(t, "2300-01-01T00:00:00Z"), 4); !slices.Equal(ticks, c.want) {
			t.Errorf("%s: Ticks = %v, want %v", c.name, ticks, c.want)
		}
	}
}

func TestTicks(t *testing.T) {
	spec := schedule.Spec{Cron: "*/10 * * * *"}
	from := at(t, "2026-11-28T12:00:00Z")
	to := at(t, "2026-11-28T12:30:00Z")
	want := []time.Time{at(t, "2026-11-28T12:10:00Z"), at(t, "2026-11-28T12:20:00Z"), at(t, "2026-11-28T12:30:00Z")}
	if got := spec.Ticks(from, to, 10); !slices.Equal(got, want) {
		t.Fatalf("Ticks(from, to] = %v, want %v (from excluded, to included)", got, want)
	}
	if got := spec.Ticks(from, to, 2); !slices.Equal(got, want[:2]) {
		t.Fatalf("Ticks with max 2 = %v, want %v", got, want[:2])
	}
	if got := spec.Ticks(from, to, 0); got != nil {
		t.Fatalf("Ticks with max 0 = %v, want none", got)
	}
	if got := spec.Ticks(to, from, 10); got != nil {
		t.Fatalf("Ticks of an empty range = %v, want none", got)
	}
	bad := schedule.Spec{Cron: "61 * * * *"}
	if next, ticks := bad.Next(from), bad.Ticks(from, to, 10); !next.IsZero() || ticks != nil {
		t.Fatalf("an invalid spec has ticks: %v, %v", next, ticks)
	}
}
