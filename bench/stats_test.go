package bench

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- { // 1..100 ms, unsorted
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	s := summarize(d)
	if s.Count != 100 || s.P50 != 50 || s.P90 != 90 || s.P99 != 99 || s.Max != 100 || s.Mean != 50.5 {
		t.Fatalf("summary %+v", s)
	}
	if s := summarize([]time.Duration{3 * time.Millisecond}); s.P50 != 3 || s.P99 != 3 || s.Max != 3 {
		t.Fatalf("one value: %+v", s)
	}
	if s := summarize(nil); s.Count != 0 {
		t.Fatalf("none: %+v", s)
	}
}
