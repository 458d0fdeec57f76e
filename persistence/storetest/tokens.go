package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// PageTokens writes fixed handlers, tasks and published-event log entries
// to s, an empty store, and returns the next-page tokens of fixed first
// pages of each listing, with and without filters. A backend compares
// them with the tokens it issued before a change: a client keeps a page
// token across an upgrade, so the tokens must stay the same, byte for
// byte, or be refused on purpose.
func PageTokens(t *testing.T, s persistence.Store) []string {
	t.Helper()
	base := time.Date(2025, 3, 1, 10, 0, 0, 123456789, time.UTC)
	for i := range 5 {
		id := fmt.Sprintf("h%d", i)
		h := persistence.Handler{ID: id, Workflow: fmt.Sprint("wf", i%2), Status: persistence.StatusRunning,
			Residency: persistence.ResidencyReleased, CreatedAt: base.Add(time.Duration(i) * time.Second), UpdatedAt: base, IdleSince: base}
		task := persistence.Task{ID: id + ":w", HandlerID: id, Workflow: h.Workflow, Assignee: fmt.Sprint("u", i%2),
			Status: persistence.TaskPending, CreatedAt: h.CreatedAt}
		write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{task}})
		publish(t, s, persistence.Published{ID: "p" + id, Key: "k", HandlerID: id, At: h.CreatedAt})
		publish(t, s, persistence.Published{ID: "g" + id, Key: "k", At: h.CreatedAt})
	}
	var tokens []string
	next := func(what, token string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		tokens = append(tokens, token)
	}
	for _, q := range []persistence.Query{
		{PageSize: 2},
		{PageSize: 2, Workflow: "wf0"},
		{PageSize: 1, Statuses: []persistence.Status{persistence.StatusRunning, persistence.StatusFailed}, IdleFor: time.Hour,
			Now: base.Add(2 * time.Hour), Residency: persistence.ResidencyReleased},
	} {
		_, token, err := s.ListHandlers(t.Context(), q)
		next(fmt.Sprintf("ListHandlers(%+v)", q), token, err)
	}
	for _, q := range []persistence.TaskQuery{
		{PageSize: 2},
		{PageSize: 1, Assignees: []string{"u1", "u0", "u1"}, Statuses: []persistence.TaskStatus{persistence.TaskPending}},
		{PageSize: 1, Workflow: "wf1", Assignee: "u1"},
	} {
		_, token, err := s.ListTasks(t.Context(), q)
		next(fmt.Sprintf("ListTasks(%+v)", q), token, err)
	}
	for _, q := range []persistence.PublishedQuery{
		{PageSize: 2},
		{PageSize: 1, Key: "k", Since: base.Add(time.Second)},
	} {
		_, token, err := s.ListPublished(t.Context(), q)
		next(fmt.Sprintf("ListPublished(%+v)", q), token, err)
	}
	return tokens
}
