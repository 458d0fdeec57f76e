package schedule_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/schedule"
)

func TestValidateID(t *testing.T) {
	for id, ok := range map[string]bool{
		"nightly": true, "a": true, "Report_2026.v-1": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "a:b": false, "a b": false, "ä": false, "a/b": false, "a\x00": false,
	} {
		err := schedule.ValidateID(id)
		if (err == nil) != ok || (err != nil && !errors.Is(err, schedule.ErrInvalid)) {
			t.Errorf("ValidateID(%q) = %v, want ok %v", id, err, ok)
		}
	}
}

func TestHandlerIDs(t *testing.T) {
	apiID := regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	tick := time.Date(2026, 11, 28, 12, 0, 0, 0, time.FixedZone("X", 3600))
	if got, want := schedule.HandlerID("nightly", tick), "sched:nightly:20261128T110000Z"; got != want {
		t.Fatalf("HandlerID = %q, want %q", got, want)
	}
	trigger := time.Unix(1764331200, 123456789)
	if got, want := schedule.TriggerHandlerID("nightly", trigger), "sched:nightly:trigger:1764331200123456789"; got != want {
		t.Fatalf("TriggerHandlerID = %q, want %q", got, want)
	}
	long := strings.Repeat("x", schedule.MaxIDLen)
	for _, c := range []struct {
		id      string
		tick    time.Time
		trigger bool
	}{
		{"nightly", tick.UTC(), false},
		{long, time.Date(2199, 12, 31, 23, 59, 59, 0, time.UTC), false},
		{"nightly", trigger.UTC(), true},
		{long, time.Unix(0, -1<<63).UTC(), true},
		{"a.b-c_d", time.Unix(0, 0).UTC(), true},
	} {
		h := schedule.HandlerID(c.id, c.tick)
		if c.trigger {
			h = schedule.TriggerHandlerID(c.id, c.tick)
		}
		if !apiID.MatchString(h) {
			t.Errorf("handler id %q is not an API handler id", h)
		}
		id, tick, trig, ok := schedule.ParseHandlerID(h)
		if !ok || id != c.id || !tick.Equal(c.tick) || trig != c.trigger {
			t.Errorf("ParseHandlerID(%q) = %q, %v, %v, %v; want %q, %v, %v", h, id, tick, trig, ok, c.id, c.tick, c.trigger)
		}
	}
	for _, h := range []string{
		"", "nightly", "sched:", "sched:nightly", "sched::20261128T120000Z", "sched:nightly:2026-11-28",
		"sched:a:b:20261128T120000Z", "sched:nightly:trigger:", "sched:nightly:trigger:x", "sched:nightly:trigger:+1",
		"sched:nightly:trigger:01", "other:nightly:20261128T120000Z",
	} {
		if id, _, _, ok := schedule.ParseHandlerID(h); ok {
			t.Errorf("ParseHandlerID(%q) = %q, ok", h, id)
		}
	}
}
