package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

func testListHandlersFilters(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	ids := newIDs(t, 8)
	const (
		running   = persistence.StatusRunning
		completed = persistence.StatusCompleted
		failed    = persistence.StatusFailed
		cancelled = persistence.StatusCancelled
		active    = persistence.ResidencyActive
		released  = persistence.ResidencyReleased
	)
	fixture := []struct {
		workflow  string
		status    persistence.Status
		residency persistence.Residency
		idleFor   time.Duration // 0: not idle
	}{
		{"alpha", running, released, 3 * time.Hour},
		{"beta", running, active, 10 * time.Minute},
		{"alpha", completed, active, 0},
		{"alpha", running, active, 30 * time.Minute},
		{"beta", failed, released, 0},
		{"alpha", cancelled, active, 0},
		{"beta", running, released, 2 * time.Hour},
		{"alpha", running, active, 0},
	}
	var changes []persistence.Change
	for i, f := range fixture {
		h := newHandler(ids[i], f.workflow)
		h.Status, h.Residency = f.status, f.residency
		if f.idleFor > 0 {
			h.IdleSince = now.Add(-f.idleFor)
		}
		changes = append(changes, persistence.Change{Handler: h, Create: true})
	}
	// Written in one Write, in shuffled order: order must come from ids.
	slices.Reverse(changes[2:6])
	write(t, s, changes...)

	sts := func(s ...persistence.Status) []persistence.Status { return s }
	tests := []struct {
		name  string
		query persistence.Query
		want  []int // indexes into fixture, newest first
	}{
		{"all", persistence.Query{}, []int{7, 6, 5, 4, 3, 2, 1, 0}},
		{"workflow alpha", persistence.Query{Workflow: "alpha"}, []int{7, 5, 3, 2, 0}},
		{"workflow beta", persistence.Query{Workflow: "beta"}, []int{6, 4, 1}},
		{"unknown workflow", persistence.Query{Workflow: "gamma"}, nil},
		{"workflow prefix is not a match", persistence.Query{Workflow: "alph"}, nil},
		{"running", persistence.Query{Statuses: sts(running)}, []int{7, 6, 3, 1, 0}},
		{"completed or failed", persistence.Query{Statuses: sts(completed, failed)}, []int{4, 2}},
		{"duplicate statuses", persistence.Query{Statuses: sts(cancelled, running, running)}, []int{7, 6, 5, 3, 1, 0}},
		{"idle", persistence.Query{IdleOnly: true}, []int{6, 3, 1, 0}},
		{"idle for 20m", persistence.Query{IdleFor: 20 * time.Minute, Now: now}, []int{6, 3, 0}},
		{"idle for 1h", persistence.Query{IdleOnly: true, IdleFor: time.Hour, Now: now}, []int{6, 0}},
		{"idle for exactly 30m", persistence.Query{IdleFor: 30 * time.Minute, Now: now}, []int{6, 3, 0}},
		{"idle for 1h, an hour later", persistence.Query{IdleFor: time.Hour, Now: now.Add(time.Hour)}, []int{6, 3, 1, 0}},
		{"idle for 5h", persistence.Query{IdleFor: 5 * time.Hour, Now: now}, nil},
		{"released", persistence.Query{Residency: released}, []int{6, 4, 0}},
		{"active", persistence.Query{Residency: active}, []int{7, 5, 3, 2, 1}},
		{"alpha running", persistence.Query{Workflow: "alpha", Statuses: sts(running)}, []int{7, 3, 0}},
		{"alpha running idle", persistence.Query{Workflow: "alpha", Statuses: sts(running), IdleOnly: true}, []int{3, 0}},
		{"alpha running idle released", persistence.Query{Workflow: "alpha", Statuses: sts(running), IdleOnly: true, Residency: released}, []int{0}},
		{"beta running idle 1h released", persistence.Query{Workflow: "beta", Statuses: sts(running), IdleFor: time.Hour, Now: now, Residency: released}, []int{6}},
		{"beta completed", persistence.Query{Workflow: "beta", Statuses: sts(completed)}, nil},
		{"failed released", persistence.Query{Statuses: sts(failed), Residency: released}, []int{4}},
		{"terminal active", persistence.Query{Statuses: sts(completed, failed, cancelled), Residency: active}, []int{5, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, i := range tt.want {
				want = append(want, ids[i])
			}
			for _, size := range []int{0, 1, 2, 100} {
				q := tt.query
				q.PageSize = size
				if got := handlerIDs(listAll(t, s, q)); !slices.Equal(got, want) {
					t.Fatalf("page size %d: got %v, want %v", size, got, want)
				}
			}
		})
	}
}

func testListHandlersPaging(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	const n = persistence.MaxPageSize + 5
	ids := newIDs(t, n+1)
	var changes []persistence.Change
	for i, id := range ids[:n] {
		h := newHandler(id, "wf")
		if i%2 == 0 {
			h.Status = persistence.StatusCompleted
		}
		changes = append(changes, persistence.Change{Handler: h, Create: true})
	}
	write(t, s, changes...)
	all := slices.Clone(ids[:n])
	slices.Reverse(all)

	t.Run("page sizes", func(t *testing.T) {
		for _, size := range []int{1, 7, 100, n - 1, n, 2 * n} {
			got := handlerIDs(listAll(t, s, persistence.Query{PageSize: size}))
			if !slices.Equal(got, all) {
				t.Fatalf("page size %d: got %d handlers, want %d (in order)", size, len(got), len(all))
			}
		}
	})
	t.Run("default and maximum page size", func(t *testing.T) {
		for _, tt := range []struct{ size, want int }{
			{0, persistence.DefaultPageSize},
			{n * 10, persistence.MaxPageSize},
		} {
			hs, next, err := s.ListHandlers(t.Context(), persistence.Query{PageSize: tt.size})
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) != tt.want || next == "" {
				t.Fatalf("PageSize %d: %d handlers, next %q; want %d and a token", tt.size, len(hs), next, tt.want)
			}
		}
	})
	t.Run("filtered pages", func(t *testing.T) {
		var want []string
		for i := n - 1; i >= 0; i-- {
			if i%2 == 0 {
				want = append(want, ids[i])
			}
		}
		got := handlerIDs(listAll(t, s, persistence.Query{Statuses: []persistence.Status{persistence.StatusCompleted}, PageSize: 33}))
		if !slices.Equal(got, want) {
			t.Fatalf("got %d handlers, want %d (in order)", len(got), len(want))
		}
	})
	t.Run("changes between pages", func(t *testing.T) {
		q := persistence.Query{PageSize: 10}
		first, next, err := s.ListHandlers(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		// A newer handler does not appear in later pages, and deleting the
		// handler a token points at does not break the token.
		write(t, s, persistence.Change{Handler: newHandler(ids[n], "wf"), Create: true})
		last := first[len(first)-1].ID
		write(t, s, persistence.Change{Handler: persistence.Handler{ID: last}, Delete: true})
		q.PageToken = next
		second, _, err := s.ListHandlers(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := handlerIDs(second), all[10:20]; !slices.Equal(got, want) {
			t.Fatalf("second page = %v, want %v", got, want)
		}
	})
}

func testListHandlersErrors(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 3)
	for _, id := range ids {
		write(t, s, persistence.Change{Handler: newHandler(id, "wf")})
	}
	_, token, err := s.ListHandlers(t.Context(), persistence.Query{Workflow: "wf", PageSize: 1})
	if err != nil || token == "" {
		t.Fatalf("ListHandlers: token %q, err %v", token, err)
	}
	tests := []struct {
		name  string
		query persistence.Query
	}{
		{"garbage token", persistence.Query{PageToken: "not a token!"}},
		{"truncated token", persistence.Query{Workflow: "wf", PageToken: token[:len(token)/2]}},
		{"token of other filters", persistence.Query{Workflow: "other", PageToken: token}},
		{"token without its filters", persistence.Query{PageToken: token}},
		{"invalid status", persistence.Query{Statuses: []persistence.Status{0}}},
		{"invalid residency", persistence.Query{Residency: 7}},
		{"negative IdleFor", persistence.Query{IdleFor: -time.Second}},
		{"negative PageSize", persistence.Query{PageSize: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := s.ListHandlers(t.Context(), tt.query)
			wantErr(t, "ListHandlers", err, persistence.ErrInvalid)
		})
	}
	// The same token with its own filters and another page size works.
	hs, _, err := s.ListHandlers(t.Context(), persistence.Query{Workflow: "wf", PageSize: 5, PageToken: token})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := handlerIDs(hs), []string{ids[1], ids[0]}; !slices.Equal(got, want) {
		t.Fatalf("second page = %v, want %v", got, want)
	}
}

// testListHandlersOrder checks that newest first means by creation time
// (ties by id), whatever the ids: UUIDv7s in reverse order of creation and
// ids callers chose, such as "zzz-late" for a handler created early. Every
// filter and page size lists in that order.
func testListHandlersOrder(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := baseTime()
	uuids := newIDs(t, 3)
	const (
		running   = persistence.StatusRunning
		completed = persistence.StatusCompleted
		active    = persistence.ResidencyActive
		released  = persistence.ResidencyReleased
	)
	fixture := []struct {
		id        string
		workflow  string
		status    persistence.Status
		residency persistence.Residency
		created   time.Duration // after now
		idleFor   time.Duration // before now; 0: not idle
	}{
		{"zzz-late", "alpha", running, released, 0, 3 * time.Hour},
		{uuids[2], "beta", running, active, time.Minute, 10 * time.Minute},
		{"order-9", "alpha", completed, active, 2 * time.Minute, 0},
		{"order-10", "alpha", running, active, 3 * time.Minute, 30 * time.Minute},
		{uuids[1], "beta", completed, released, 4 * time.Minute, 0},
		{"tie-b", "alpha", running, released, 5 * time.Minute, time.Hour},
		{"tie-a", "beta", running, active, 5 * time.Minute, 0},
		{uuids[0], "alpha", running, released, 6 * time.Minute, 2 * time.Hour},
		{"aaa-newest", "alpha", running, active, time.Hour, 0},
	}
	m := model{}
	var changes []persistence.Change
	for _, f := range fixture {
		h := newHandler(f.id, f.workflow)
		h.Status, h.Residency = f.status, f.residency
		h.CreatedAt = now.Add(f.created)
		if f.idleFor > 0 {
			h.IdleSince = now.Add(-f.idleFor)
		}
		m[h.ID] = h
		changes = append(changes, persistence.Change{Handler: h, Create: true})
	}
	write(t, s, changes...)

	// By hand, so the model's order is checked too.
	want := []string{"aaa-newest", uuids[0], "tie-b", "tie-a", uuids[1], "order-10", "order-9", uuids[2], "zzz-late"}
	if got := m.list(persistence.Query{}); !slices.Equal(got, want) {
		t.Fatalf("model lists %v, want %v", got, want)
	}
	for _, size := range []int{0, 1, 2, 4} {
		if got := handlerIDs(listAll(t, s, persistence.Query{PageSize: size})); !slices.Equal(got, want) {
			t.Fatalf("page size %d: got %v, want %v", size, got, want)
		}
	}
	// Every filter and combination checkModel tries, against the model.
	checkModel(t, s, m, now)
	sts := func(s ...persistence.Status) []persistence.Status { return s }
	for _, q := range []persistence.Query{
		{Workflow: "alpha", Statuses: sts(running), IdleFor: time.Hour, Now: now, Residency: released},
		{Workflow: "beta", IdleOnly: true},
		{Statuses: sts(completed), Residency: released},
		{IdleFor: 20 * time.Minute, Now: now},
	} {
		for _, size := range []int{1, 2, 0} {
			q.PageSize = size
			if got, want := handlerIDs(listAll(t, s, q)), m.list(q); !slices.Equal(got, want) {
				t.Fatalf("ListHandlers(%+v) = %v, want %v", q, got, want)
			}
		}
	}
}

// testListHandlersPagingStable pages newest first through handlers whose ids
// do not follow their creation while handlers are created, changed and
// deleted between pages: a page continues after the previous page's last
// handler by creation time, so newer handlers stay out, older ones created
// meanwhile come later, and no handler is listed twice or skipped.
func testListHandlersPagingStable(t *testing.T, open OpenFunc) {
	for _, tt := range []struct {
		name  string
		query persistence.Query
	}{
		{"all", persistence.Query{}},
		{"filtered", persistence.Query{Workflow: "wf", Statuses: []persistence.Status{persistence.StatusRunning}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := openStore(t, open)
			now := baseTime()
			const n = 20
			created := func(i int) time.Time { return now.Add(time.Duration(i) * time.Minute) }
			var changes []persistence.Change
			var want []string // newest first
			for i := range n {
				// Ids sort against creation: "h-19" is the oldest.
				h := newHandler(fmt.Sprintf("h-%02d", n-1-i), "wf")
				h.CreatedAt = created(i)
				changes = append(changes, persistence.Change{Handler: h, Create: true})
				want = append([]string{h.ID}, want...)
			}
			write(t, s, changes...)

			q := tt.query
			q.PageSize = 3
			var got []string
			for page := 0; ; page++ {
				hs, next, err := s.ListHandlers(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, handlerIDs(hs)...)
				if next == "" {
					break
				}
				switch page {
				case 0:
					// Newer than everything, with the smallest id: not listed.
					h := newHandler("a-newest", "wf")
					h.CreatedAt = created(n + 1)
					write(t, s, persistence.Change{Handler: h, Create: true})
				case 1:
					// Older than everything, with the greatest id: listed last.
					h := newHandler("z-oldest", "wf")
					h.CreatedAt = created(-1)
					write(t, s, persistence.Change{Handler: h, Create: true})
					want = append(want, h.ID)
				case 2:
					// A listed handler and one still to come change.
					for _, id := range []string{got[0], want[len(got)+1]} {
						h := getHandler(t, s, id)
						h.UpdatedAt = h.UpdatedAt.Add(time.Hour)
						h.IdleSince = now
						write(t, s, persistence.Change{Handler: h})
					}
				case 3:
					// The handler the token points at goes.
					write(t, s, persistence.Change{Handler: persistence.Handler{ID: got[len(got)-1]}, Delete: true})
				}
				q.PageToken = next
			}
			if !slices.Equal(got, want) {
				t.Fatalf("paged through %v, want %v", got, want)
			}
		})
	}
}
