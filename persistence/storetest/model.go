package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// model is what a store should contain: the latest metadata of every
// handler. Its queries are brute force, so they are obviously right; the
// suite compares the store's indexed answers with them.
type model map[string]persistence.Handler

func (m model) list(q persistence.Query) []string {
	cutoff, idle := q.IdleCutoff()
	var ids []string
	for id, h := range m {
		switch {
		case q.Workflow != "" && h.Workflow != q.Workflow,
			len(q.Statuses) > 0 && !slices.Contains(q.Statuses, h.Status),
			q.Residency != 0 && h.Residency != q.Residency,
			idle && h.IdleSince.IsZero(),
			idle && !cutoff.IsZero() && h.IdleSince.After(cutoff):
			continue
		}
		ids = append(ids, id)
	}
	// Newest first: by creation time, ties by id, also descending.
	slices.SortFunc(ids, func(a, b string) int {
		return cmp.Or(m[b].CreatedAt.Compare(m[a].CreatedAt), cmp.Compare(b, a))
	})
	return ids
}

func (m model) timers(before time.Time) []persistence.Timer {
	var ts []persistence.Timer
	for _, h := range m {
		if !h.Deadline.IsZero() && !h.Deadline.After(before) {
			ts = append(ts, persistence.Timer{Due: h.Deadline, HandlerID: h.ID})
		}
		for _, w := range h.Waiters {
			if !w.Deadline.IsZero() && !w.Deadline.After(before) {
				ts = append(ts, persistence.Timer{Due: w.Deadline, HandlerID: h.ID, WaiterID: w.ID})
			}
		}
	}
	slices.SortFunc(ts, func(a, b persistence.Timer) int {
		return cmp.Or(a.Due.Compare(b.Due), cmp.Compare(a.HandlerID, b.HandlerID), cmp.Compare(a.WaiterID, b.WaiterID))
	})
	return ts
}

func (m model) waitingFor(key string) []string {
	var ids []string
	for _, h := range m {
		if slices.ContainsFunc(h.Waiters, func(w persistence.Waiter) bool { return w.Key == key }) {
			ids = append(ids, h.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

func (m model) keys() []string {
	var keys []string
	for _, h := range m {
		for _, w := range h.Waiters {
			if w.Key != "" && !slices.Contains(keys, w.Key) {
				keys = append(keys, w.Key)
			}
		}
	}
	return keys
}

func (m model) longestIdle(before time.Time) []persistence.Idle {
	var idle []persistence.Idle
	for _, h := range m {
		if !h.IdleSince.IsZero() && !h.IdleSince.After(before) {
			idle = append(idle, persistence.Idle{HandlerID: h.ID, Since: h.IdleSince})
		}
	}
	slices.SortFunc(idle, func(a, b persistence.Idle) int {
		return cmp.Or(a.Since.Compare(b.Since), cmp.Compare(a.HandlerID, b.HandlerID))
	})
	return idle
}

func (m model) counts() persistence.Counts {
	c := persistence.Counts{
		Handlers:    int64(len(m)),
		ByStatus:    make(map[persistence.Status]int64),
		ByResidency: make(map[persistence.Residency]int64),
	}
	for _, s := range persistence.Statuses() {
		c.ByStatus[s] = 0
	}
	for _, r := range persistence.Residencies() {
		c.ByResidency[r] = 0
	}
	c.TasksByStatus = taskModel{}.counts().TasksByStatus
	for _, h := range m {
		c.ByStatus[h.Status]++
		c.ByResidency[h.Residency]++
		if !h.IdleSince.IsZero() {
			c.Idle++
		}
	}
	return c
}

// checkModel compares everything the store answers from its indexes with
// the model: listings under every kind of filter, timers, waiter keys
// (including stale ones), idle handlers and counts (of a store without
// tasks). staleKeys are waiter
// keys that were used once and must now be gone.
func checkModel(t *testing.T, s persistence.Store, m model, now time.Time, staleKeys ...string) {
	t.Helper()
	for _, q := range m.queries(now) {
		for _, size := range []int{0, 3} {
			q.PageSize = size
			checkListing(t, s, m, q)
		}
	}
	for id, want := range m {
		checkHandler(t, getHandler(t, s, id), want)
	}
	for _, before := range []time.Time{now.Add(-time.Hour), now, now.Add(100 * 24 * time.Hour)} {
		checkScans(t, s, m, before)
	}
	for _, key := range append(m.keys(), staleKeys...) {
		ids, err := s.WaitingFor(t.Context(), key, 0)
		if err != nil {
			t.Fatalf("WaitingFor(%q): %v", key, err)
		}
		if want := m.waitingFor(key); !slices.Equal(ids, want) {
			t.Fatalf("WaitingFor(%q) = %v, want %v", key, ids, want)
		}
	}
	checkCounts(t, s, m.counts())
}

// queries returns a query of every kind of filter, and of combinations of
// them, for the workflows of the model and one it does not have.
func (m model) queries(now time.Time) []persistence.Query {
	workflows := []string{"no-such-workflow"}
	for _, h := range m {
		if !slices.Contains(workflows, h.Workflow) {
			workflows = append(workflows, h.Workflow)
		}
	}
	queries := []persistence.Query{{}}
	for _, wf := range workflows {
		queries = append(queries, persistence.Query{Workflow: wf})
	}
	for _, st := range persistence.Statuses() {
		queries = append(queries,
			persistence.Query{Statuses: []persistence.Status{st}},
			persistence.Query{Statuses: []persistence.Status{st, persistence.StatusRunning}})
	}
	for _, r := range persistence.Residencies() {
		queries = append(queries, persistence.Query{Residency: r})
	}
	for _, d := range []time.Duration{0, time.Minute, time.Hour, 24 * time.Hour} {
		queries = append(queries,
			persistence.Query{IdleOnly: true, IdleFor: d, Now: now},
			persistence.Query{IdleFor: d, Now: now, Statuses: []persistence.Status{persistence.StatusRunning}, Residency: persistence.ResidencyReleased})
	}
	for _, wf := range workflows {
		queries = append(queries,
			persistence.Query{Workflow: wf, Statuses: []persistence.Status{persistence.StatusRunning}, IdleOnly: true},
			persistence.Query{Workflow: wf, Residency: persistence.ResidencyActive, Statuses: []persistence.Status{persistence.StatusCompleted, persistence.StatusFailed}})
	}
	return queries
}

// checkListing lists every page of q and compares them with the model.
func checkListing(t *testing.T, s persistence.Store, m model, q persistence.Query) {
	t.Helper()
	got := listAll(t, s, q)
	if want := m.list(q); !slices.Equal(handlerIDs(got), want) {
		t.Fatalf("ListHandlers(%+v) = %v, want %v", q, handlerIDs(got), want)
	}
	for _, h := range got {
		if d := diffHandler(h, m[h.ID]); d != "" {
			t.Fatalf("ListHandlers(%+v): handler %s: %s", q, h.ID, d)
		}
	}
}

// checkScans compares the timers due and the handlers idle at before with
// the model.
func checkScans(t *testing.T, s persistence.Store, m model, before time.Time) {
	t.Helper()
	timers, err := s.DueTimers(t.Context(), before, 0)
	if err != nil {
		t.Fatalf("DueTimers: %v", err)
	}
	if want := m.timers(before); !equalTimers(timers, want) {
		t.Fatalf("DueTimers(%v) = %v, want %v", before, timers, want)
	}
	idle, err := s.LongestIdle(t.Context(), before, 0)
	if err != nil {
		t.Fatalf("LongestIdle: %v", err)
	}
	if want := m.longestIdle(before); !equalIdle(idle, want) {
		t.Fatalf("LongestIdle(%v) = %v, want %v", before, idle, want)
	}
}

// listAll pages through q and returns every handler.
func listAll(t *testing.T, s persistence.Store, q persistence.Query) []persistence.Handler {
	t.Helper()
	all, _ := pageAll(t, fmt.Sprintf("ListHandlers(%+v)", q), q.Limit(), q.PageToken, func(token string) ([]persistence.Handler, string, error) {
		q.PageToken = token
		return s.ListHandlers(t.Context(), q)
	})
	return all
}

func checkCounts(t *testing.T, s persistence.Store, want persistence.Counts) {
	t.Helper()
	got, err := s.Count(t.Context())
	if err != nil {
		t.Fatalf("Count: %v", err)
	}
	equal := got.Handlers == want.Handlers && got.Idle == want.Idle
	for _, st := range persistence.Statuses() {
		equal = equal && got.ByStatus[st] == want.ByStatus[st]
	}
	for _, r := range persistence.Residencies() {
		equal = equal && got.ByResidency[r] == want.ByResidency[r]
	}
	equal = equal && got.Tasks == want.Tasks
	for _, st := range persistence.TaskStatuses() {
		equal = equal && got.TasksByStatus[st] == want.TasksByStatus[st]
	}
	if !equal {
		t.Fatalf("Count = %+v, want %+v", got, want)
	}
}

func equalTimers(a, b []persistence.Timer) bool {
	return slices.EqualFunc(a, b, func(x, y persistence.Timer) bool {
		return x.Due.Equal(y.Due) && x.HandlerID == y.HandlerID && x.WaiterID == y.WaiterID
	})
}

func equalIdle(a, b []persistence.Idle) bool {
	return slices.EqualFunc(a, b, func(x, y persistence.Idle) bool {
		return x.Since.Equal(y.Since) && x.HandlerID == y.HandlerID
	})
}
