package codec_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// fullSchedule has every field set, times in UTC.
func fullSchedule() persistence.Schedule {
	at := time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC)
	return persistence.Schedule{
		ID: "nightly", Cron: "0 3 * * *", TimeZone: "Europe/Berlin", Interval: time.Hour, Phase: time.Minute,
		StartAt: at, EndAt: at.Add(time.Hour), Workflow: "report", WorkflowVersion: "v1", Input: []byte(`{"a":1}`),
		Overlap: "allow", CatchupWindow: time.Minute, Paused: true, Note: "note", Owner: "alice",
		CreatedAt: at, UpdatedAt: at.Add(time.Second), NextTick: at.Add(time.Minute), State: []byte{0, 1, 2}, Revision: 7,
	}
}

func TestScheduleRoundTrip(t *testing.T) {
	for _, s := range []persistence.Schedule{fullSchedule(), {ID: "min", Workflow: "w"}} {
		b, err := codec.EncodeSchedule(&s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := codec.DecodeStoredSchedule(s.ID, b)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("round trip of %s:\n got %+v\nwant %+v", b, got, s)
		}
	}
}

// TestGoldenScheduleV1: the stored form of version 1, which stored
// schedules keep, decodes as it did.
func TestGoldenScheduleV1(t *testing.T) {
	const golden = `{"v":1,"id":"nightly","cron":"0 3 * * *","tz":"Europe/Berlin","interval":3600000000000,` +
		`"phase":60000000000,"start":"2026-11-28T12:00:00.123456789Z","end":"2026-11-28T13:00:00.123456789Z",` +
		`"workflow":"report","version":"v1","input":"eyJhIjoxfQ==","overlap":"allow","catchup":60000000000,` +
		`"paused":true,"note":"note","owner":"alice","created":"2026-11-28T12:00:00.123456789Z",` +
		`"updated":"2026-11-28T12:00:01.123456789Z","next":"2026-11-28T12:01:00.123456789Z","state":"AAEC","rev":7}`
	want := fullSchedule()
	b, err := codec.EncodeSchedule(&want)
	if err != nil || string(b) != golden {
		t.Fatalf("EncodeSchedule = %s, %v; want\n%s", b, err, golden)
	}
	got, err := codec.DecodeSchedule([]byte(golden))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeSchedule(golden) = %+v, %v", got, err)
	}
}

func TestDecodeScheduleRefuses(t *testing.T) {
	for name, raw := range map[string]string{
		"not JSON":        `{"v":1,`,
		"unknown version": `{"v":2,"id":"a","workflow":"w"}`,
		"no version":      `{"id":"a","workflow":"w"}`,
		"bad time":        `{"v":1,"id":"a","workflow":"w","next":"yesterday"}`,
		"invalid":         `{"v":1,"id":"","workflow":"w"}`,
		"wrong type":      `{"v":1,"id":"a","workflow":"w","interval":"1h"}`,
	} {
		if _, err := codec.DecodeSchedule([]byte(raw)); !errors.Is(err, persistence.ErrCorrupt) {
			t.Errorf("%s: DecodeSchedule(%s) = %v, want ErrCorrupt", name, raw, err)
		}
	}
	b, _ := codec.EncodeSchedule(&persistence.Schedule{ID: "a", Workflow: "w"})
	if _, err := codec.DecodeStoredSchedule("b", b); !errors.Is(err, persistence.ErrCorrupt) {
		t.Errorf("DecodeStoredSchedule under another id = %v, want ErrCorrupt", err)
	}
}

func FuzzDecodeSchedule(f *testing.F) {
	s := fullSchedule()
	b, _ := codec.EncodeSchedule(&s)
	f.Add(b)
	f.Add([]byte(`{"v":1,"id":"a","workflow":"w"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := codec.DecodeSchedule(b)
		if err != nil {
			return
		}
		// What decodes re-encodes and decodes to the same schedule (an
		// empty Input or State as nil: the encoding leaves both out).
		again, err := codec.EncodeSchedule(&s)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Input) == 0 {
			s.Input = nil
		}
		if len(s.State) == 0 {
			s.State = nil
		}
		if got, err := codec.DecodeSchedule(again); err != nil || !reflect.DeepEqual(got, s) {
			t.Fatalf("re-decoded %+v, %v; want %+v", got, err, s)
		}
	})
}
