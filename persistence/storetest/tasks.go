package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

func testTaskUpsertGet(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 2)
	now := baseTime()
	h, other := newHandler(ids[0], "approve"), newHandler(ids[1], "approve")

	_, err := s.GetTask(t.Context(), h.ID+":w1")
	wantErr(t, "GetTask(unknown)", err, persistence.ErrNotFound)

	// Tasks come with their handler's change, even its creation.
	task := newTask(h, "w1", now)
	task.Assignee = "alice"
	write(t, s, persistence.Change{Handler: h, Create: true, Records: records(1), Tasks: []persistence.Task{task}})
	checkTask(t, getTask(t, s, task.ID), task)
	h.LastSeq = 1
	checkHandler(t, getHandler(t, s, h.ID), h)

	// A pending task's life: claimed, commented on, then handed to
	// another assignee (the listings by assignee follow).
	task.ClaimedBy, task.ClaimedAt = "alice", now.Add(time.Minute)
	task.Comments = []persistence.TaskComment{{ID: "c1", By: "carol", At: now.Add(2 * time.Minute), Text: "receipt?"}, {By: "alice", At: now.Add(3 * time.Minute), Text: "attached"}}
	write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{task}})
	checkTask(t, getTask(t, s, task.ID), task)
	task.Assignee, task.ClaimedBy, task.ClaimedAt = "group:finance", "", time.Time{}
	write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{task}})
	checkTaskModel(t, s, taskModel{task.ID: task}, false)

	// An upsert replaces every field, in a change that re-sends the
	// handler's metadata unchanged.
	task = complete(task, "alice", now.Add(time.Hour))
	task.Title, task.Description, task.Step = "Approved?", "", "ask-again"
	task.Schema, task.Deadline, task.Assignee = nil, time.Time{}, "bob"
	write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{task}})
	checkTask(t, getTask(t, s, task.ID), task)
	checkHandler(t, getHandler(t, s, h.ID), h)

	// Rewriting an unchanged task changes nothing.
	write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{task}})
	checkTaskModel(t, s, taskModel{task.ID: task}, false)

	// Returned slices are the caller's.
	got := getTask(t, s, task.ID)
	got.Answer[0] = 'X'
	checkTask(t, getTask(t, s, task.ID), task)
	answer := []byte(`"mine"`)
	mine := newTask(h, "w2", now)
	mine.Answer = answer
	write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{mine}})
	answer[0] = 'Y'
	mine.Answer = []byte(`"mine"`)
	checkTask(t, getTask(t, s, mine.ID), mine)

	// A task never moves to another handler: the whole Write fails.
	stolen := task
	stolen.HandlerID = other.ID
	err = s.Write(t.Context(), persistence.Change{Handler: other, Create: true, Tasks: []persistence.Task{stolen}})
	wantErr(t, "upserting another handler's task", err, persistence.ErrConflict)
	if _, err := s.GetHandler(t.Context(), other.ID); err == nil {
		t.Fatal("the failed change created its handler")
	}
	checkTaskModel(t, s, taskModel{task.ID: task, mine.ID: mine}, false)

	// Ids may use the characters of "<handler id>:<waiter id>" and be up
	// to MaxTaskIDLen bytes long.
	long := newTask(h, "", now)
	long.ID = strings.Repeat("a:b/c.d-", persistence.MaxTaskIDLen/8)
	write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{long}})
	checkTask(t, getTask(t, s, long.ID), long)
}

func testInvalidTasks(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 2)
	h := newHandler(ids[0], "wf")
	valid := func(edit func(c *persistence.Change, task *persistence.Task)) persistence.Change {
		c := persistence.Change{Handler: h}
		task := newTask(h, "w", baseTime())
		edit(&c, &task)
		c.Tasks = append([]persistence.Task{task}, c.Tasks...)
		return c
	}
	tests := []struct {
		name   string
		change persistence.Change
	}{
		{"empty id", valid(func(_ *persistence.Change, task *persistence.Task) { task.ID = "" })},
		{"long id", valid(func(_ *persistence.Change, task *persistence.Task) {
			task.ID = strings.Repeat("x", persistence.MaxTaskIDLen+1)
		})},
		{"NUL in id", valid(func(_ *persistence.Change, task *persistence.Task) { task.ID = "a\x00b" })},
		{"empty handler id", valid(func(_ *persistence.Change, task *persistence.Task) { task.HandlerID = "" })},
		{"another handler's id", valid(func(_ *persistence.Change, task *persistence.Task) { task.HandlerID = ids[1] })},
		{"empty workflow", valid(func(_ *persistence.Change, task *persistence.Task) { task.Workflow = "" })},
		{"NUL in workflow", valid(func(_ *persistence.Change, task *persistence.Task) { task.Workflow = "w\x00" })},
		{"NUL in assignee", valid(func(_ *persistence.Change, task *persistence.Task) { task.Assignee = "al\x00ice" })},
		{"long assignee", valid(func(_ *persistence.Change, task *persistence.Task) {
			task.Assignee = strings.Repeat("a", persistence.MaxAssigneeLen+1)
		})},
		{"unspecified status", valid(func(_ *persistence.Change, task *persistence.Task) { task.Status = 0 })},
		{"unknown status", valid(func(_ *persistence.Change, task *persistence.Task) { task.Status = 9 })},
		{"time out of range", valid(func(_ *persistence.Change, task *persistence.Task) {
			task.Deadline = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
		})},
		{"duplicate id", valid(func(c *persistence.Change, task *persistence.Task) { c.Tasks = []persistence.Task{*task} })},
		{"Delete with Tasks", valid(func(c *persistence.Change, _ *persistence.Task) { c.Delete = true })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Write(t.Context(), persistence.Change{Handler: newHandler(newIDs(t, 1)[0], "wf")}, tt.change)
			wantErr(t, "Write", err, persistence.ErrInvalid)
		})
	}
	checkCounts(t, s, model{}.counts())
}

// testTaskTransitions moves tasks through their life (assigned, answered,
// reassigned, expired, moved to another workflow, created at another time)
// and checks after every step that every index answers from the current
// tasks only: a completed task no longer lists as pending, a reassigned one
// no longer under its old assignee.
func testTaskTransitions(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	ids := newIDs(t, 2)
	h1, h2 := newHandler(ids[0], "alpha"), newHandler(ids[1], "beta")
	a, b, c := newTask(h1, "a", now), newTask(h1, "b", now.Add(time.Second)), newTask(h2, "c", now)
	m := taskModel{}
	put := func(h persistence.Handler, ts ...persistence.Task) {
		t.Helper()
		write(t, s, persistence.Change{Handler: h, Tasks: ts})
		for _, task := range ts {
			m[task.ID] = task
		}
	}
	pendingOf := func(who string) []string {
		return taskIDs(listAllTasks(t, s, persistence.TaskQuery{Statuses: []persistence.TaskStatus{persistence.TaskPending}, Assignee: who}))
	}
	steps := []struct {
		name string
		run  func()
	}{
		{"create", func() { put(h1, a, b); put(h2, c) }},
		{"assign", func() { a.Assignee, b.Assignee, c.Assignee = "alice", "alice", "bob"; put(h1, a, b); put(h2, c) }},
		{"complete", func() {
			a = complete(a, "alice", now.Add(time.Minute))
			put(h1, a)
			if got := pendingOf("alice"); !slices.Equal(got, []string{b.ID}) {
				t.Fatalf("alice's pending tasks after completing %s: %v", a.ID, got)
			}
		}},
		{"reassign", func() {
			b.Assignee = "bob"
			put(h1, b)
			if got := pendingOf("alice"); len(got) != 0 {
				t.Fatalf("alice's pending tasks after reassigning: %v", got)
			}
		}},
		{"unassign", func() { c.Assignee = ""; put(h2, c) }},
		{"expire and cancel", func() {
			b.Status, c.Status = persistence.TaskExpired, persistence.TaskCancelled
			put(h1, b)
			put(h2, c)
		}},
		{"reopen, renamed, recreated later", func() {
			a.Status, a.Workflow, a.CreatedAt = persistence.TaskPending, "gamma", now.Add(-time.Hour)
			a.CompletedAt, a.CompletedBy, a.Answer = time.Time{}, "", nil
			put(h1, a)
		}},
		{"created at the same instant", func() {
			d := newTask(h2, "d", a.CreatedAt)
			d.Assignee = "alice"
			put(h2, d)
		}},
	}
	for _, st := range steps {
		st.run()
		t.Run(st.name, func(t *testing.T) { checkTaskModel(t, s, m, false) })
	}
}

// taskFixture writes tasks of three handlers with every combination of
// status, assignee (including none) and workflow, created at times that
// tie and that do not follow the ids.
func taskFixture(t *testing.T, s persistence.Store) (taskModel, []persistence.Handler) {
	t.Helper()
	now := baseTime()
	ids := newIDs(t, 3)
	hs := []persistence.Handler{newHandler(ids[0], "wf-a"), newHandler(ids[1], "wf-b"), newHandler(ids[2], "wf-a")}
	assignees := []string{"alice", "bob", ""}
	m := taskModel{}
	var changes []persistence.Change
	i := 0
	for hi, h := range hs {
		var ts []persistence.Task
		for _, st := range persistence.TaskStatuses() {
			for _, who := range assignees {
				// Times repeat every 5 tasks: ties across handlers, and
				// newer tasks with smaller ids.
				task := newTask(h, fmt.Sprintf("w/%d.%d", st, len(ts)), now.Add(time.Duration((i*7)%5)*time.Minute))
				task.Status, task.Assignee = st, who
				if hi == 2 {
					task.Workflow = "wf-c" // a task's workflow need not be its handler's
				}
				ts = append(ts, task)
				m[task.ID] = task
				i++
			}
		}
		changes = append(changes, persistence.Change{Handler: h, Tasks: ts})
	}
	write(t, s, changes...)
	return m, hs
}

func testListTasksFilters(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	m, _ := taskFixture(t, s)
	checkTaskModel(t, s, m, true)
}

// testListTasksOrder checks newest first on a hand-made example: by
// CreatedAt, then by id, both descending, whatever the write order.
func testListTasksOrder(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	h := newHandler(newIDs(t, 1)[0], "wf")
	mk := func(id string, created time.Time) persistence.Task {
		task := newTask(h, "", created)
		task.ID = id
		return task
	}
	tasks := []persistence.Task{
		mk("b", now),
		mk("a", now.Add(time.Nanosecond)),
		mk("ab", now),
		mk("c", now.Add(-time.Hour)),
		mk("0", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), // before the Unix epoch
		mk("z", now.Add(-time.Nanosecond)),
	}
	write(t, s, persistence.Change{Handler: h, Tasks: tasks})
	want := []string{"a", "b", "ab", "z", "c", "0"}
	for _, size := range []int{0, 1, 4} {
		if got := taskIDs(listAllTasks(t, s, persistence.TaskQuery{PageSize: size})); !slices.Equal(got, want) {
			t.Fatalf("page size %d: %v, want %v", size, got, want)
		}
	}
}

func testListTasksPaging(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	const n = persistence.MaxPageSize + 5
	now := baseTime()
	ids := newIDs(t, 2)
	h := newHandler(ids[0], "wf")
	m := taskModel{}
	var ts []persistence.Task
	for i := range n {
		task := newTask(h, fmt.Sprint(i), now.Add(time.Duration(i/3)*time.Second))
		if i%2 == 0 {
			task.Assignee = "alice"
		}
		ts = append(ts, task)
		m[task.ID] = task
	}
	write(t, s, persistence.Change{Handler: h, Tasks: ts})
	all := m.list(persistence.TaskQuery{})

	t.Run("page sizes", func(t *testing.T) {
		for _, size := range []int{1, 7, n - 1, n, 2 * n} {
			if got := taskIDs(listAllTasks(t, s, persistence.TaskQuery{PageSize: size})); !slices.Equal(got, all) {
				t.Fatalf("page size %d: got %d tasks, want %d (in order)", size, len(got), len(all))
			}
		}
	})
	t.Run("default and maximum page size", func(t *testing.T) {
		for _, tt := range []struct{ size, want int }{
			{0, persistence.DefaultPageSize},
			{n * 10, persistence.MaxPageSize},
		} {
			got, next, err := s.ListTasks(t.Context(), persistence.TaskQuery{PageSize: tt.size})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want || next == "" {
				t.Fatalf("PageSize %d: %d tasks, next %q; want %d and a token", tt.size, len(got), next, tt.want)
			}
		}
	})
	t.Run("filtered pages", func(t *testing.T) {
		q := persistence.TaskQuery{Statuses: []persistence.TaskStatus{persistence.TaskPending}, Assignee: "alice", PageSize: 33}
		if got, want := taskIDs(listAllTasks(t, s, q)), m.list(q); !slices.Equal(got, want) {
			t.Fatalf("got %d tasks, want %d (in order)", len(got), len(want))
		}
	})
	t.Run("changes between pages", func(t *testing.T) {
		q := persistence.TaskQuery{Statuses: []persistence.TaskStatus{persistence.TaskPending}, PageSize: 10}
		first, next, err := s.ListTasks(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		// A newer task does not appear in later pages, and completing the
		// task the token points at (it leaves the pending index) does not
		// break the token.
		write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{
			newTask(h, "newest", now.Add(time.Hour)),
			complete(first[len(first)-1], "alice", now),
		}})
		q.PageToken = next
		second, _, err := s.ListTasks(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := taskIDs(second), all[10:20]; !slices.Equal(got, want) {
			t.Fatalf("second page = %v, want %v", got, want)
		}
	})
}

func testListTasksErrors(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 3)
	for _, id := range ids {
		h := newHandler(id, "wf")
		task := newTask(h, "w", baseTime())
		task.Assignee = "alice"
		write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{task}})
	}
	pending := []persistence.TaskStatus{persistence.TaskPending}
	base := persistence.TaskQuery{Statuses: pending, Assignee: "alice", Workflow: "wf", PageSize: 1}
	_, token, err := s.ListTasks(t.Context(), base)
	if err != nil || token == "" {
		t.Fatalf("ListTasks: token %q, err %v", token, err)
	}
	_, handlerToken, err := s.ListHandlers(t.Context(), persistence.Query{PageSize: 1})
	if err != nil || handlerToken == "" {
		t.Fatalf("ListHandlers: token %q, err %v", handlerToken, err)
	}
	with := func(edit func(q *persistence.TaskQuery)) persistence.TaskQuery {
		q := base
		q.PageToken = token
		edit(&q)
		return q
	}
	tests := []struct {
		name  string
		query persistence.TaskQuery
	}{
		{"garbage token", persistence.TaskQuery{PageToken: "not a token!"}},
		{"truncated token", with(func(q *persistence.TaskQuery) { q.PageToken = token[:len(token)/2] })},
		{"token without its filters", persistence.TaskQuery{PageToken: token}},
		{"other statuses", with(func(q *persistence.TaskQuery) { q.Statuses = []persistence.TaskStatus{persistence.TaskCompleted} })},
		{"no statuses", with(func(q *persistence.TaskQuery) { q.Statuses = nil })},
		{"other assignee", with(func(q *persistence.TaskQuery) { q.Assignee = "bob" })},
		{"other workflow", with(func(q *persistence.TaskQuery) { q.Workflow = "other" })},
		{"added handler", with(func(q *persistence.TaskQuery) { q.HandlerID = ids[0] })},
		{"ListHandlers token", persistence.TaskQuery{PageToken: handlerToken}},
		{"invalid status", persistence.TaskQuery{Statuses: []persistence.TaskStatus{0}}},
		{"NUL in assignee", persistence.TaskQuery{Assignee: "a\x00"}},
		{"NUL in workflow", persistence.TaskQuery{Workflow: "w\x00"}},
		{"NUL in handler id", persistence.TaskQuery{HandlerID: "h\x00"}},
		{"negative PageSize", persistence.TaskQuery{PageSize: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.ListTasks(t.Context(), tt.query)
			wantErr(t, "ListTasks", err, persistence.ErrInvalid)
		})
	}
	_, _, err = s.ListHandlers(t.Context(), persistence.Query{PageToken: token})
	wantErr(t, "ListHandlers with a ListTasks token", err, persistence.ErrInvalid)

	// The same token with its own filters (statuses in another order) and
	// another page size works.
	q := base
	q.Statuses, q.PageSize, q.PageToken = []persistence.TaskStatus{persistence.TaskPending, persistence.TaskPending}, 5, token
	ts, _, err := s.ListTasks(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := taskIDs(ts), []string{ids[1] + ":w", ids[0] + ":w"}; !slices.Equal(got, want) {
		t.Fatalf("second page = %v, want %v", got, want)
	}
}

// testTaskHandlerDelete deletes a handler: its tasks go with it (also from
// every index and count), the other handlers' stay.
func testTaskHandlerDelete(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	m, hs := taskFixture(t, s)
	gone := hs[1]
	write(t, s, persistence.Change{Handler: persistence.Handler{ID: gone.ID}, Delete: true})
	for id, task := range m {
		if task.HandlerID == gone.ID {
			delete(m, id)
			_, err := s.GetTask(t.Context(), id)
			wantErr(t, "GetTask of a deleted handler's task", err, persistence.ErrNotFound)
		}
	}
	checkTaskModel(t, s, m, false)
	if got := listAllTasks(t, s, persistence.TaskQuery{HandlerID: gone.ID}); len(got) != 0 {
		t.Fatalf("tasks of a deleted handler: %v", taskIDs(got))
	}

	// A handler created again under the deleted id starts without tasks.
	write(t, s, persistence.Change{Handler: gone, Create: true})
	if got := listAllTasks(t, s, persistence.TaskQuery{HandlerID: gone.ID}); len(got) != 0 {
		t.Fatalf("tasks of a re-created handler: %v", taskIDs(got))
	}
	checkTaskModel(t, s, m, false)
}

func testTaskCounts(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	checkTaskCounts(t, s, taskModel{}.counts())
	now := baseTime()
	ids := newIDs(t, 2)
	h1, h2 := newHandler(ids[0], "wf"), newHandler(ids[1], "wf")
	a, b, c := newTask(h1, "a", now), newTask(h1, "b", now), newTask(h2, "c", now)
	b.Status = persistence.TaskExpired
	write(t, s, persistence.Change{Handler: h1, Tasks: []persistence.Task{a, b}}, persistence.Change{Handler: h2, Tasks: []persistence.Task{c}})
	want := func(pending, completed, expired, cancelled int64) persistence.Counts {
		return persistence.Counts{
			Tasks: pending + completed + expired + cancelled,
			TasksByStatus: map[persistence.TaskStatus]int64{
				persistence.TaskPending: pending, persistence.TaskCompleted: completed,
				persistence.TaskExpired: expired, persistence.TaskCancelled: cancelled,
			},
		}
	}
	checkTaskCounts(t, s, want(2, 0, 1, 0))

	// Rewriting unchanged tasks, or changing fields other than the status,
	// changes no count; a status change moves one.
	a.Assignee = "alice"
	write(t, s, persistence.Change{Handler: h1, Tasks: []persistence.Task{a, b}})
	checkTaskCounts(t, s, want(2, 0, 1, 0))
	c.Status = persistence.TaskCancelled
	write(t, s, persistence.Change{Handler: h2, Tasks: []persistence.Task{c}})
	checkTaskCounts(t, s, want(1, 0, 1, 1))
	write(t, s, persistence.Change{Handler: h1, Tasks: []persistence.Task{complete(a, "alice", now)}})
	checkTaskCounts(t, s, want(0, 1, 1, 1))

	// Deleting a handler drops its tasks' counts; handler counts stay
	// right beside them.
	write(t, s, persistence.Change{Handler: persistence.Handler{ID: h1.ID}, Delete: true})
	checkTaskCounts(t, s, want(0, 0, 0, 1))
	got, err := s.Count(t.Context())
	if err != nil || got.Handlers != 1 || got.ByStatus[persistence.StatusRunning] != 1 {
		t.Fatalf("Count = %+v, %v; want 1 running handler", got, err)
	}
}

// testListTasksClaimOverdue: the Claim and Overdue filters, which no index
// answers, list what the model does, alone and with the indexed filters,
// in pages of every size, none skipped or listed twice.
func testListTasksClaimOverdue(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 3)
	now := baseTime()
	m := taskModel{}
	for i := range 30 {
		h := newHandler(ids[i%3], "wf")
		task := newTask(h, fmt.Sprintf("w%02d", i), now.Add(time.Duration(i)*time.Second))
		task.Assignee = []string{"ada", "bob", "group:finance"}[i%3]
		if i%4 == 0 {
			task.ClaimedBy, task.ClaimedAt = "ada", now
		}
		task.Deadline = now.Add(time.Duration(i-15) * time.Minute) // the first 15 are overdue at now
		if i%7 == 0 {
			task = complete(task, "bob", now)
		}
		write(t, s, persistence.Change{Handler: h, Create: i < 3, Tasks: []persistence.Task{task}})
		m[task.ID] = task
	}
	for _, q := range []persistence.TaskQuery{
		{Claim: persistence.ClaimHeld},
		{Claim: persistence.ClaimFree},
		{Overdue: true, Now: now},
		{Overdue: true, Now: now, Claim: persistence.ClaimFree},
		{Overdue: true, Now: now, Assignee: "ada"},
		{Claim: persistence.ClaimHeld, Statuses: []persistence.TaskStatus{persistence.TaskPending}},
		{Claim: persistence.ClaimFree, Assignee: "group:finance"},
		{Overdue: true, Now: now.Add(-time.Hour)}, // none
	} {
		want := m.list(q)
		for _, size := range []int{1, 2, 7, 100} {
			q.PageSize = size
			got, _ := pageAll(t, fmt.Sprintf("ListTasks(%+v)", q), size, "", func(token string) ([]persistence.Task, string, error) {
				q.PageToken = token
				return s.ListTasks(t.Context(), q)
			})
			if ids := taskIDs(got); !slices.Equal(ids, want) {
				t.Fatalf("ListTasks(%+v):\n got %q\nwant %q", q, ids, want)
			}
		}
	}
	_, _, err := s.ListTasks(t.Context(), persistence.TaskQuery{Claim: 9})
	wantErr(t, "ListTasks with an invalid Claim", err, persistence.ErrInvalid)
}
