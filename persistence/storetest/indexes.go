package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// testIndexCleanup moves handlers through the states the engine puts them
// in and checks after every step that every index answers exactly from the
// current metadata: no stale entries for old statuses, workflows, idle
// times, residencies, creation times, deadlines or wake keys.
func testIndexCleanup(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	ids := newIDs(t, 3)
	a, b, c := newHandler(ids[0], "alpha"), newHandler(ids[1], "beta"), newHandler(ids[2], "alpha")
	c.Status = persistence.StatusCompleted
	keys := []string{"k1", "k2", "k3"}

	m := model{}
	seq := map[string]uint64{}
	put := func(hs ...persistence.Handler) {
		t.Helper()
		var changes []persistence.Change
		for _, h := range hs {
			seq[h.ID]++
			changes = append(changes, persistence.Change{Handler: h, Records: records(seq[h.ID])})
			h.LastSeq = seq[h.ID]
			m[h.ID] = h
		}
		write(t, s, changes...)
	}
	steps := []struct {
		name string
		run  func()
	}{
		{"create", func() { put(a, b, c) }},
		{"idle with waiters", func() {
			a.IdleSince = now.Add(-time.Hour)
			a.External = []string{"note"}
			a.Deadline = now.Add(3 * time.Hour)
			a.Waiters = []persistence.Waiter{
				{ID: "w1", Key: "k1", Deadline: now.Add(time.Hour)},
				{ID: "w2", Key: "k2"},
				{ID: "w3", Deadline: now.Add(2 * time.Hour)},
			}
			put(a)
		}},
		{"waiters change", func() {
			a.IdleSince = now.Add(-time.Minute)
			a.Deadline = now.Add(-2 * time.Minute)
			a.Waiters = []persistence.Waiter{
				{ID: "w2", Key: "k3"},
				{ID: "w3", Deadline: now.Add(-time.Minute)},
			}
			put(a)
		}},
		{"released", func() {
			a.Residency, a.Owner = persistence.ResidencyReleased, ""
			put(a)
		}},
		{"creation time changes", func() {
			// The oldest id becomes the newest handler: every listing
			// index moves it, none keeps it at its old place.
			a.CreatedAt = now.Add(time.Hour)
			put(a)
		}},
		{"woken", func() {
			a.Residency, a.Owner = persistence.ResidencyActive, "replica-b"
			a.IdleSince, a.Waiters, a.External = time.Time{}, nil, nil
			put(a)
		}},
		{"another handler takes the keys", func() {
			b.IdleSince, b.Residency = now.Add(-48*time.Hour), persistence.ResidencyReleased
			b.Waiters = []persistence.Waiter{{ID: "x", Key: "k1", Deadline: now}}
			put(b)
		}},
		{"terminal and renamed", func() {
			a.Status, a.CompletedAt, a.Deadline = persistence.StatusCompleted, now, time.Time{}
			b.Workflow, b.Status = "gamma", persistence.StatusFailed
			put(a, b)
		}},
		{"delete", func() {
			write(t, s, persistence.Change{Handler: persistence.Handler{ID: c.ID}, Delete: true},
				persistence.Change{Handler: persistence.Handler{ID: b.ID}, Delete: true})
			delete(m, c.ID)
			delete(m, b.ID)
		}},
	}
	for _, st := range steps {
		st.run()
		t.Run(st.name, func(t *testing.T) { checkModel(t, s, m, now, keys...) })
	}
}

func testDueTimers(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	ids := newIDs(t, 3)
	deadlines := [][]time.Duration{
		{time.Minute, -time.Hour, 0},            // ids[0]: w0, w1, w2 (no deadline)
		{time.Minute, time.Minute, time.Second}, // ids[1]: ties within a handler
		{-time.Hour, 24 * time.Hour},            // ids[2]: tie with ids[0] across handlers
	}
	for i, ds := range deadlines {
		h := newHandler(ids[i], "wf")
		if i == 1 {
			// Its own deadline: a timer with no waiter, first of its ties.
			h.Deadline = now.Add(time.Minute)
		}
		for j, d := range ds {
			w := persistence.Waiter{ID: "w" + string(rune('0'+j))}
			if d != 0 {
				w.Deadline = now.Add(d)
			}
			h.Waiters = append(h.Waiters, w)
		}
		write(t, s, persistence.Change{Handler: h})
	}
	timer := func(d time.Duration, h int, w string) persistence.Timer {
		return persistence.Timer{Due: now.Add(d), HandlerID: ids[h], WaiterID: w}
	}
	all := []persistence.Timer{
		timer(-time.Hour, 0, "w1"),
		timer(-time.Hour, 2, "w0"),
		timer(time.Second, 1, "w2"),
		timer(time.Minute, 0, "w0"),
		timer(time.Minute, 1, ""),
		timer(time.Minute, 1, "w0"),
		timer(time.Minute, 1, "w1"),
		timer(24*time.Hour, 2, "w1"),
	}
	tests := []struct {
		name   string
		before time.Time
		limit  int
		want   []persistence.Timer
	}{
		{"none due", now.Add(-2 * time.Hour), 0, nil},
		{"overdue", now, 0, all[:2]},
		{"due exactly at before", now.Add(time.Minute), 0, all[:7]},
		{"a nanosecond earlier", now.Add(time.Minute - 1), 0, all[:3]},
		{"all", now.Add(365 * 24 * time.Hour), 0, all},
		{"limit", now.Add(365 * 24 * time.Hour), 4, all[:4]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.DueTimers(t.Context(), tt.before, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !equalTimers(got, tt.want) {
				t.Fatalf("DueTimers = %v, want %v", got, tt.want)
			}
		})
	}
}

func testWaitingFor(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 4)
	waiters := [][]persistence.Waiter{
		{{ID: "a", Key: "answer/q1"}, {ID: "b", Key: "answer/q1"}}, // twice the same key
		{{ID: "a", Key: "answer/q10"}},                             // a longer key with the same prefix
		{{ID: "a", Key: "answer/q1"}, {ID: "b"}},
		{{ID: "a", Key: "answer"}},
	}
	for i, ws := range waiters {
		h := newHandler(ids[i], "wf")
		h.Waiters = ws
		write(t, s, persistence.Change{Handler: h})
	}
	tests := []struct {
		key   string
		limit int
		want  []string
	}{
		{"answer/q1", 0, []string{ids[0], ids[2]}},
		{"answer/q1", 1, []string{ids[0]}},
		{"answer/q10", 0, []string{ids[1]}},
		{"answer", 0, []string{ids[3]}},
		{"answer/q", 0, nil},
		{"", 0, nil},
	}
	for _, tt := range tests {
		got, err := s.WaitingFor(t.Context(), tt.key, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tt.want) {
			t.Fatalf("WaitingFor(%q, %d) = %v, want %v", tt.key, tt.limit, got, tt.want)
		}
	}
}

func testLongestIdle(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	ids := newIDs(t, 4)
	idleFor := []time.Duration{time.Minute, 0, time.Hour, time.Minute} // 0: busy
	for i, d := range idleFor {
		h := newHandler(ids[i], "wf")
		if d != 0 {
			h.IdleSince = now.Add(-d)
		}
		write(t, s, persistence.Change{Handler: h})
	}
	idle := func(i int) persistence.Idle {
		return persistence.Idle{HandlerID: ids[i], Since: now.Add(-idleFor[i])}
	}
	tests := []struct {
		name   string
		before time.Time
		limit  int
		want   []persistence.Idle
	}{
		{"all", now, 0, []persistence.Idle{idle(2), idle(0), idle(3)}},
		{"limit", now, 2, []persistence.Idle{idle(2), idle(0)}},
		{"idle since at most at before", now.Add(-time.Minute), 0, []persistence.Idle{idle(2), idle(0), idle(3)}},
		{"idle for more than a minute", now.Add(-time.Minute - 1), 0, []persistence.Idle{idle(2)}},
		{"none", now.Add(-2 * time.Hour), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.LongestIdle(t.Context(), tt.before, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !equalIdle(got, tt.want) {
				t.Fatalf("LongestIdle = %v, want %v", got, tt.want)
			}
		})
	}
}

func testCount(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	checkCounts(t, s, model{}.counts())
	ids := newIDs(t, 3)
	hs := []persistence.Handler{newHandler(ids[0], "a"), newHandler(ids[1], "a"), newHandler(ids[2], "b")}
	hs[1].Status, hs[1].Residency, hs[1].IdleSince = persistence.StatusFailed, persistence.ResidencyReleased, baseTime()
	hs[2].IdleSince = baseTime()
	for _, h := range hs {
		write(t, s, persistence.Change{Handler: h})
	}
	want := persistence.Counts{
		Handlers: 3,
		Idle:     2,
		ByStatus: map[persistence.Status]int64{
			persistence.StatusRunning: 2, persistence.StatusFailed: 1,
		},
		ByResidency: map[persistence.Residency]int64{
			persistence.ResidencyActive: 2, persistence.ResidencyReleased: 1,
		},
	}
	checkCounts(t, s, want)

	// Rewriting unchanged metadata changes no count.
	write(t, s, persistence.Change{Handler: hs[0]}, persistence.Change{Handler: hs[0]})
	checkCounts(t, s, want)

	hs[2].Status, hs[2].IdleSince = persistence.StatusCancelled, time.Time{}
	write(t, s, persistence.Change{Handler: hs[2]},
		persistence.Change{Handler: persistence.Handler{ID: hs[0].ID}, Delete: true})
	want = persistence.Counts{
		Handlers: 2,
		Idle:     1,
		ByStatus: map[persistence.Status]int64{
			persistence.StatusFailed: 1, persistence.StatusCancelled: 1,
		},
		ByResidency: map[persistence.Residency]int64{
			persistence.ResidencyActive: 1, persistence.ResidencyReleased: 1,
		},
	}
	checkCounts(t, s, want)
}
