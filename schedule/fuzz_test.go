package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/schedule"
)

// FuzzParseSpec: ParseSpec never panics, refuses with a *SpecError only,
// and a spec it takes is one it takes again unchanged, whose Next after
// any time is zero or a later whole second in UTC before MaxYear that is
// a tick (Next just before it finds it again).
func FuzzParseSpec(f *testing.F) {
	zones := []string{"", "UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Sao_Paulo",
		"America/Santiago", "Asia/Kathmandu", "Pacific/Chatham", "Asia/Tehran", "Europe/Lisbon", "Africa/Casablanca"}
	crons := []string{"* * * * *", "30 2 * * *", "0 0 * * *", "*/7 1-5,22 1,15,31 */2 MON-FRI", "0 0 29 2 *",
		"@hourly", "@yearly", "0 0 31 4,6 *", "59 23 31 12 6", "0 1 30 3 *", "CRON_TZ=x", "1-2-3 * * * *", ""}
	for i, c := range crons {
		f.Add(c, zones[i%len(zones)], int64(0), int64(0), int64(1774000000+i*86400*37))
	}
	f.Add("", "", int64(3600), int64(900), int64(-1))
	f.Add("", "", int64(1), int64(0), int64(7258118400))
	f.Fuzz(func(t *testing.T, expr, zone string, interval, phase, after int64) {
		spec := schedule.Spec{Cron: expr, TimeZone: zone,
			Interval: time.Duration(interval%(400*365*86400)) * time.Second, Phase: time.Duration(phase%(400*365*86400)) * time.Second}
		parsed, err := schedule.ParseSpec(spec)
		if err != nil {
			var se *schedule.SpecError
			if !errors.As(err, &se) {
				t.Fatalf("ParseSpec(%+v) = %v, not a *SpecError", spec, err)
			}
			return
		}
		if again, err := schedule.ParseSpec(parsed); err != nil || again != parsed {
			t.Fatalf("ParseSpec(%+v) = %+v, %v; want it unchanged", parsed, again, err)
		}
		// Any second from 1600 to 2400.
		from := time.Unix(after%(400*365*86400)+946684800, 0)
		next := parsed.Next(from)
		if next.IsZero() {
			return
		}
		switch {
		case !next.After(from):
			t.Fatalf("%+v: Next(%v) = %v, not after it", parsed, from, next)
		case next.Location() != time.UTC || next.Nanosecond() != 0 || next.Year() >= schedule.MaxYear:
			t.Fatalf("%+v: Next(%v) = %v, not a whole second in UTC before %d", parsed, from, next, schedule.MaxYear)
		case !parsed.Next(next.Add(-time.Nanosecond)).Equal(next):
			t.Fatalf("%+v: Next(%v) = %v, but Next just before it = %v", parsed, from, next, parsed.Next(next.Add(-time.Nanosecond)))
		}
	})
}
