package histcheck_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/histcheck"
)

func TestSummarize(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		want histcheck.Stats
	}{
		{"none", nil, histcheck.Stats{}},
		{"one", ms(7), histcheck.Stats{N: 1, Min: 7 * time.Millisecond, Median: 7 * time.Millisecond, P99: 7 * time.Millisecond, Max: 7 * time.Millisecond}},
		{"unsorted", ms(30, 10, 20), histcheck.Stats{N: 3, Min: 10 * time.Millisecond, Median: 20 * time.Millisecond, P99: 30 * time.Millisecond, Max: 30 * time.Millisecond}},
		{"hundred", ms(hundred...), histcheck.Stats{N: 100, Min: time.Millisecond, Median: 50 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}},
	} {
		if got := histcheck.Summarize(tc.in); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestCheckTakeovers(t *testing.T) {
	bound := 4 * time.Second
	kill := func(d time.Duration) histcheck.Takeover {
		return histcheck.Takeover{Kind: "kill", Schedule: histcheck.ScheduleKill, Served: true, First: d}
	}
	for _, tc := range []struct {
		name string
		in   []histcheck.Takeover
		want string // "" passes
	}{
		{"within", []histcheck.Takeover{kill(2 * time.Second), kill(3 * time.Second)}, ""},
		{"a kill beyond", []histcheck.Takeover{kill(2 * time.Second), kill(5 * time.Second)}, "after kills: p99 5s"},
		{"a pause never served", []histcheck.Takeover{{Kind: "pause", Schedule: histcheck.SchedulePause}}, "after pauses: p99 never"},
		{"a paused-owner handler beyond", []histcheck.Takeover{{Kind: "pause", Schedule: histcheck.SchedulePausedOwner, Served: true, First: time.Second,
			Each: []time.Duration{time.Second, 9 * time.Second}}}, "paused-owner, each handler: p99 9s"},
	} {
		got := strings.Join(histcheck.CheckTakeovers(tc.in, bound), "\n")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
