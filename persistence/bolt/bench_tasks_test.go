package bolt_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// BenchmarkListTasks lists one page of 50 from 10,000 tasks of 100
// assignees (three quarters pending, over 1,000 handlers and 3
// workflows). "pending+assignee" is the inbox query: one key range of
// idx_task_assignee, whatever the other assignees have. The others show
// the union (assignee without status), the intersection (with a workflow)
// and the listings without an assignee.
func BenchmarkListTasks(b *testing.B) {
	const (
		n         = 10_000
		assignees = 100
	)
	s, err := bolt.Open(filepath.Join(b.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	start := time.Now()
	var changes []persistence.Change
	for h := range n / 10 {
		hd := benchHandler(uuid.Must(uuid.NewV7()).String(), h)
		hd.Workflow = fmt.Sprint("wf-", h%3)
		c := persistence.Change{Handler: hd}
		for w := range 10 {
			i := h*10 + w
			st := persistence.TaskPending
			if i%4 == 3 {
				st = persistence.TaskCompleted
			}
			c.Tasks = append(c.Tasks, persistence.Task{
				ID: fmt.Sprintf("%s:w%d", hd.ID, w), HandlerID: hd.ID, Workflow: hd.Workflow, Step: "ask",
				Title: "Approve the order?", Schema: []byte(`{"type":"boolean"}`),
				Assignee: fmt.Sprint("user-", i%assignees), Status: st, CreatedAt: start.Add(time.Duration(i) * time.Millisecond),
			})
		}
		changes = append(changes, c)
	}
	if err := s.Write(b.Context(), changes...); err != nil {
		b.Fatal(err)
	}
	pending := []persistence.TaskStatus{persistence.TaskPending}
	for _, q := range []struct {
		name  string
		query persistence.TaskQuery
	}{
		{"pending+assignee", persistence.TaskQuery{Statuses: pending, Assignee: "user-42"}},
		{"assignee", persistence.TaskQuery{Assignee: "user-42"}},
		{"pending+assignee+workflow", persistence.TaskQuery{Statuses: pending, Assignee: "user-42", Workflow: "wf-2"}},
		{"pending", persistence.TaskQuery{Statuses: pending}},
		{"no-filter", persistence.TaskQuery{}},
	} {
		b.Run(q.name, func(b *testing.B) {
			q.query.PageSize = 50
			var n int
			for b.Loop() {
				ts, _, err := s.ListTasks(b.Context(), q.query)
				if err != nil || len(ts) == 0 {
					b.Fatalf("ListTasks: %d tasks, %v", len(ts), err)
				}
				n = len(ts)
			}
			b.ReportMetric(float64(n), "tasks/page")
		})
	}
}

// BenchmarkPublish appends events with fsync on, from 1 and 32 goroutines:
// each Publish is its own commit, shared with concurrent ones by the group
// commit.
func BenchmarkPublish(b *testing.B) {
	for _, goroutines := range []int{1, 32} {
		b.Run(fmt.Sprint("goroutines=", goroutines), func(b *testing.B) {
			s, err := bolt.Open(filepath.Join(b.TempDir(), "wfd.db"), bolt.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			data := make([]byte, 200)
			handler := uuid.Must(uuid.NewV7()).String()
			publish := func() {
				_, err := s.Publish(b.Context(), persistence.Published{
					ID: uuid.Must(uuid.NewV7()).String(), Key: "answer/q1", HandlerID: handler, Data: data, At: time.Now(),
				})
				if err != nil {
					b.Error(err)
				}
			}
			if goroutines == 1 {
				for b.Loop() {
					publish()
				}
			} else {
				procs := runtime.GOMAXPROCS(0)
				b.SetParallelism((goroutines + procs - 1) / procs)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						publish()
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkFindPublished finds events among 100,000: half on one hot key
// (50,000 events, global and addressed to 1,000 handlers), half spread
// over 1,000 keys. Each lookup is two seeks, so the hot key costs what a
// cold one does.
func BenchmarkFindPublished(b *testing.B) {
	const (
		n        = 100_000
		handlers = 1000
	)
	s, err := bolt.Open(filepath.Join(b.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ids := make([]string, handlers)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7()).String()
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	event := func(i int) persistence.Published {
		p := persistence.Published{ID: fmt.Sprint("event-", i), Key: fmt.Sprint("key-", i%1000), At: start.Add(time.Duration(i) * time.Second), Data: make([]byte, 100)}
		if i%2 == 0 {
			p.Key = "hot"
		}
		if i%10 != 0 {
			p.HandlerID = ids[(i/2)%handlers]
		}
		return p
	}
	// Fill from a few goroutines, so the group commit batches.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if _, err := s.Publish(b.Context(), event(i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, key := range []string{"hot", "cold"} {
		b.Run("key="+key, func(b *testing.B) {
			found := 0
			for b.Loop() {
				k := "hot"
				if key == "cold" {
					k = fmt.Sprint("key-", 2*rng.IntN(500)+1)
				}
				since := start.Add(time.Duration(rng.IntN(n*9/10)) * time.Second)
				_, ok, err := s.FindPublished(b.Context(), k, ids[rng.IntN(handlers)], since)
				if err != nil {
					b.Fatal(err)
				}
				if ok {
					found++
				}
			}
			b.ReportMetric(float64(found)/float64(b.N), "found/op")
		})
	}
}
