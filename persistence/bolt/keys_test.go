package bolt

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestTimeKeyOrder checks that encoded times sort like the times, across
// the epoch, far past and future, and nanoseconds, and decode back.
func TestTimeKeyOrder(t *testing.T) {
	times := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1677, 1, 1, 0, 0, 0, 0, time.UTC), // before UnixNano's range
		time.Unix(-1, 999999999),
		time.Unix(0, 0),
		time.Unix(0, 1),
		time.Date(2025, 1, 1, 0, 0, 0, 0, time.FixedZone("X", 3600)),
		time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC), // after UnixNano's range
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		times = append(times, time.Unix(rng.Int64N(1<<36)-1<<35, rng.Int64N(1e9)))
	}
	for _, a := range times {
		ka := appendTime(nil, a)
		if got, ok := parseTime(ka); !ok || !got.Equal(a) {
			t.Fatalf("parseTime(appendTime(%v)) = %v, %v", a, got, ok)
		}
		for _, b := range times[:10] {
			if got, want := bytes.Compare(ka, appendTime(nil, b)), a.Compare(b); got != want {
				t.Fatalf("compare(%v, %v) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestParseTimerKey(t *testing.T) {
	due := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	k := timerKey(due, "handler", "waiter")
	gotDue, h, w, ok := parseTimerKey(k)
	if !ok || !gotDue.Equal(due) || h != "handler" || w != "waiter" {
		t.Fatalf("parseTimerKey = %v %q %q %v", gotDue, h, w, ok)
	}
	for _, bad := range [][]byte{nil, k[:5], k[:timeLen], appendTime(nil, due)} {
		if _, _, _, ok := parseTimerKey(bad); ok {
			t.Fatalf("parseTimerKey(%q) accepted a malformed key", bad)
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct{ prefix, want []byte }{
		{nil, nil},
		{[]byte{0xff, 0xff}, nil},
		{[]byte("a\x00"), []byte("a\x01")},
		{[]byte{1, 0xff}, []byte{2}},
	}
	for _, tt := range tests {
		if got := prefixEnd(tt.prefix); !bytes.Equal(got, tt.want) {
			t.Errorf("prefixEnd(%q) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}
