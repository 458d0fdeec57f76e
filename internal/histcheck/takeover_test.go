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
		name          string
		in            []histcheck.Takeover
		blocked, late string // "" passes
	}{
		{"within", []histcheck.Takeover{kill(2 * time.Second), kill(3 * time.Second)}, "", ""},
		{"a kill beyond", []histcheck.Takeover{kill(2 * time.Second), kill(5 * time.Second)}, "", "after kills: p99 5s"},
		{"a pause never served", []histcheck.Takeover{{Kind: "pause", Schedule: histcheck.SchedulePause, Paused: 6 * time.Second}},
			"1 of 1 handlers served elsewhere only once it was continued", "after pauses: p99 never"},
		{"a pause served late, while still paused", []histcheck.Takeover{{Kind: "pause", Schedule: histcheck.SchedulePause, Served: true,
			First: 5 * time.Second, Paused: 6 * time.Second}}, "", "after pauses: p99 5s"},
		{"a paused-owner handler beyond", []histcheck.Takeover{{Kind: "pause", Schedule: histcheck.SchedulePausedOwner, Served: true, First: time.Second,
			Each: []time.Duration{time.Second, 9 * time.Second}, Paused: 8 * time.Second}},
			"1 of 2 handlers served elsewhere only once it was continued after 8s", "paused-owner, each handler: p99 9s"},
	} {
		blocked, late := histcheck.CheckTakeovers(tc.in, bound)
		for _, c := range []struct{ what, got, want string }{
			{"blocked", strings.Join(blocked, "\n"), tc.blocked}, {"late", strings.Join(late, "\n"), tc.late},
		} {
			if c.want == "" && c.got != "" || !strings.Contains(c.got, c.want) {
				t.Errorf("%s: %s %q, want %q", tc.name, c.what, c.got, c.want)
			}
		}
	}
}
