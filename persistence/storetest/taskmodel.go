package storetest

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// newTask returns a pending task of h for waiter, with every field set
// that a pending task has. Its id has the characters the engine's ids do.
func newTask(h persistence.Handler, waiter string, created time.Time) persistence.Task {
	return persistence.Task{
		ID:          h.ID + ":" + waiter,
		HandlerID:   h.ID,
		Workflow:    h.Workflow,
		Step:        "ask",
		Title:       "Approve " + waiter + "?",
		Description: "Please answer.",
		Schema:      []byte(`{"type":"boolean"}`),
		Input:       []byte(`{"lines":[{"item":"taxi","amount":42}]}`),
		InputSchema: []byte(`{"type":"object"}`),
		Status:      persistence.TaskPending,
		CreatedAt:   created,
		Deadline:    created.Add(24 * time.Hour),
	}
}

// complete returns t answered by who at at.
func complete(t persistence.Task, who string, at time.Time) persistence.Task {
	t.Status, t.CompletedBy, t.CompletedAt, t.Answer = persistence.TaskCompleted, who, at, []byte(`true`)
	return t
}

// taskModel is what a store's tasks should be: the latest version of every
// task, answered by brute force.
type taskModel map[string]persistence.Task

func (m taskModel) list(q persistence.TaskQuery) []string {
	var ts []persistence.Task
	for _, t := range m {
		switch {
		case len(q.Statuses) > 0 && !slices.Contains(q.Statuses, t.Status),
			q.Assignee != "" && t.Assignee != q.Assignee,
			len(q.Assignees) > 0 && !slices.Contains(q.Assignees, t.Assignee),
			q.Workflow != "" && t.Workflow != q.Workflow,
			q.HandlerID != "" && t.HandlerID != q.HandlerID,
			!q.Keeps(&t):
			continue
		}
		ts = append(ts, t)
	}
	// Newest first; ties by id, also descending.
	slices.SortFunc(ts, func(a, b persistence.Task) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return taskIDs(ts)
}

// values returns the distinct non-empty values of a field, and one that no
// task has.
func (m taskModel) values(field func(persistence.Task) string) []string {
	vs := []string{"no-such-value"}
	for _, t := range m {
		if v := field(t); v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}

// taskStatusSets are the status filters the suite lists with.
func taskStatusSets() [][]persistence.TaskStatus {
	const (
		pending   = persistence.TaskPending
		completed = persistence.TaskCompleted
		expired   = persistence.TaskExpired
		cancelled = persistence.TaskCancelled
	)
	return [][]persistence.TaskStatus{
		nil,
		{pending},
		{completed},
		{expired, cancelled},
		{completed, pending, pending}, // unsorted, with a duplicate
		{cancelled, expired, completed, pending},
	}
}

// taskQueries returns the queries checkTaskModel compares: with full, every
// combination of every filter value (including "none" and a value no task
// has); without, each filter alone and the pairs that the indexes answer
// differently (status with assignee, assignee with workflow, ...).
func (m taskModel) taskQueries(full bool) []persistence.TaskQuery {
	assignees := append([]string{""}, m.values(func(t persistence.Task) string { return t.Assignee })...)
	workflows := append([]string{""}, m.values(func(t persistence.Task) string { return t.Workflow })...)
	handlers := append([]string{""}, m.values(func(t persistence.Task) string { return t.HandlerID })...)
	var qs []persistence.TaskQuery
	if full {
		for _, st := range taskStatusSets() {
			for _, a := range assignees {
				for _, w := range workflows {
					for _, h := range handlers {
						qs = append(qs, persistence.TaskQuery{Statuses: st, Assignee: a, Workflow: w, HandlerID: h})
					}
				}
			}
		}
		return qs
	}
	for _, st := range taskStatusSets() {
		qs = append(qs, persistence.TaskQuery{Statuses: st})
		for _, a := range assignees[1:] {
			qs = append(qs, persistence.TaskQuery{Statuses: st, Assignee: a})
		}
	}
	// Any of several assignees ("my tasks": a person and their groups),
	// with one that no task has.
	if len(assignees) > 3 {
		several := []string{assignees[1], assignees[2], assignees[len(assignees)-1], assignees[1]}
		for _, st := range taskStatusSets() {
			qs = append(qs, persistence.TaskQuery{Statuses: st, Assignees: several})
		}
		qs = append(qs, persistence.TaskQuery{Assignees: several, Workflow: workflows[len(workflows)-1]})
	}
	for _, w := range workflows[1:] {
		qs = append(qs, persistence.TaskQuery{Workflow: w},
			persistence.TaskQuery{Workflow: w, Statuses: []persistence.TaskStatus{persistence.TaskPending}})
		for _, a := range assignees[1:] {
			qs = append(qs, persistence.TaskQuery{Workflow: w, Assignee: a})
		}
	}
	for _, h := range handlers[1:] {
		qs = append(qs, persistence.TaskQuery{HandlerID: h},
			persistence.TaskQuery{HandlerID: h, Statuses: []persistence.TaskStatus{persistence.TaskPending}})
	}
	return qs
}

func (m taskModel) counts() persistence.Counts {
	c := persistence.Counts{Tasks: int64(len(m)), TasksByStatus: make(map[persistence.TaskStatus]int64)}
	for _, st := range persistence.TaskStatuses() {
		c.TasksByStatus[st] = 0
	}
	for _, t := range m {
		c.TasksByStatus[t.Status]++
	}
	return c
}

// checkTaskModel compares the store's tasks with the model: every task
// read by id, every listing of taskQueries(full) at two page sizes, and the
// task counts.
func checkTaskModel(t *testing.T, s persistence.Store, m taskModel, full bool) {
	t.Helper()
	for id, want := range m {
		checkTask(t, getTask(t, s, id), want)
	}
	for _, q := range m.taskQueries(full) {
		want := m.list(q)
		for _, size := range []int{0, 2} {
			q.PageSize = size
			got := listAllTasks(t, s, q)
			if !slices.Equal(taskIDs(got), want) {
				t.Fatalf("ListTasks(%+v) = %v, want %v", q, taskIDs(got), want)
			}
			for _, task := range got {
				if d := diffTask(task, m[task.ID]); d != "" {
					t.Fatalf("ListTasks(%+v): task %s: %s", q, task.ID, d)
				}
			}
		}
	}
	checkTaskCounts(t, s, m.counts())
}

// listAllTasks pages through q and returns every task.
func listAllTasks(t *testing.T, s persistence.Store, q persistence.TaskQuery) []persistence.Task {
	t.Helper()
	all, _ := pageAll(t, fmt.Sprintf("ListTasks(%+v)", q), q.Limit(), q.PageToken, func(token string) ([]persistence.Task, string, error) {
		q.PageToken = token
		return s.ListTasks(t.Context(), q)
	})
	return all
}

// checkTaskCounts compares the task counters only.
func checkTaskCounts(t *testing.T, s persistence.Store, want persistence.Counts) {
	t.Helper()
	got, err := s.Count(t.Context())
	if err != nil {
		t.Fatalf("Count: %v", err)
	}
	equal := got.Tasks == want.Tasks
	for _, st := range persistence.TaskStatuses() {
		_, present := got.TasksByStatus[st]
		equal = equal && present && got.TasksByStatus[st] == want.TasksByStatus[st]
	}
	if !equal {
		t.Fatalf("Count: tasks %d by status %v, want %d by status %v", got.Tasks, got.TasksByStatus, want.Tasks, want.TasksByStatus)
	}
}

func getTask(t *testing.T, s persistence.Store, id string) persistence.Task {
	t.Helper()
	task, err := s.GetTask(t.Context(), id)
	if err != nil {
		t.Fatalf("GetTask(%s): %v", id, err)
	}
	return task
}

func checkTask(t *testing.T, got, want persistence.Task) {
	t.Helper()
	if d := diffTask(got, want); d != "" {
		t.Fatalf("task %s: %s", want.ID, d)
	}
}

// diffTask describes the first difference between two tasks, or returns
// "". Times compare as instants, byte slices by content.
func diffTask(got, want persistence.Task) string {
	type field struct {
		name      string
		got, want any
		equal     bool
	}
	for _, f := range []field{
		{"ID", got.ID, want.ID, got.ID == want.ID},
		{"HandlerID", got.HandlerID, want.HandlerID, got.HandlerID == want.HandlerID},
		{"Workflow", got.Workflow, want.Workflow, got.Workflow == want.Workflow},
		{"Step", got.Step, want.Step, got.Step == want.Step},
		{"Title", got.Title, want.Title, got.Title == want.Title},
		{"Description", got.Description, want.Description, got.Description == want.Description},
		{"Schema", got.Schema, want.Schema, bytes.Equal(got.Schema, want.Schema)},
		{"Assignee", got.Assignee, want.Assignee, got.Assignee == want.Assignee},
		{"Status", got.Status, want.Status, got.Status == want.Status},
		{"CreatedAt", got.CreatedAt, want.CreatedAt, got.CreatedAt.Equal(want.CreatedAt)},
		{"Deadline", got.Deadline, want.Deadline, got.Deadline.Equal(want.Deadline)},
		{"CompletedAt", got.CompletedAt, want.CompletedAt, got.CompletedAt.Equal(want.CompletedAt)},
		{"CompletedBy", got.CompletedBy, want.CompletedBy, got.CompletedBy == want.CompletedBy},
		{"Answer", got.Answer, want.Answer, bytes.Equal(got.Answer, want.Answer)},
		{"Input", got.Input, want.Input, bytes.Equal(got.Input, want.Input)},
		{"InputSchema", got.InputSchema, want.InputSchema, bytes.Equal(got.InputSchema, want.InputSchema)},
		{"CancelReason", got.CancelReason, want.CancelReason, got.CancelReason == want.CancelReason},
		{"ClaimedBy", got.ClaimedBy, want.ClaimedBy, got.ClaimedBy == want.ClaimedBy},
		{"ClaimedAt", got.ClaimedAt, want.ClaimedAt, got.ClaimedAt.Equal(want.ClaimedAt)},
		{"Comments", got.Comments, want.Comments, slices.EqualFunc(got.Comments, want.Comments, func(a, b persistence.TaskComment) bool {
			return a.ID == b.ID && a.By == b.By && a.Text == b.Text && a.At.Equal(b.At)
		})},
	} {
		if !f.equal {
			return fmt.Sprintf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	if !got.CreatedAt.IsZero() && got.CreatedAt.Location() != time.UTC {
		return fmt.Sprintf("CreatedAt location = %v, want UTC", got.CreatedAt.Location())
	}
	return ""
}

func taskIDs(ts []persistence.Task) []string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return ids
}
