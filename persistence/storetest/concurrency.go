package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// testConcurrentWriters has many goroutines checkpoint their own handlers
// at once, as the engine's per-handler loops do, while readers list and
// read. Every acknowledged write must be visible afterwards.
func testConcurrentWriters(t *testing.T, open OpenFunc) {
	const (
		writers = 32
		writes  = 8
	)
	s := openStore(t, open)
	now := baseTime()
	ids := newIDs(t, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	final := make([]persistence.Handler, writers)
	for g := range writers {
		wg.Go(func() {
			<-start
			final[g] = checkpoint(t, s, g, newHandler(ids[g], fmt.Sprintf("wf-%d", g%3)), writes, now)
		})
	}
	stop := readAlong(t, s)
	close(start)
	wg.Wait()
	stop()
	if t.Failed() {
		t.FailNow()
	}

	m := model{}
	for g, h := range final {
		m[h.ID] = h
		checkSnapshot(t, s, h.ID, fmt.Appendf(nil, "snapshot %d/%d", g, writes-1))
		recs, err := s.ReadRecords(t.Context(), h.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []uint64
		for i := range 2 * writes {
			seqs = append(seqs, uint64(i+1))
		}
		checkRecords(t, "records of "+h.ID, recs, records(seqs...))
	}
	checkModel(t, s, m, now, "key-0", "key-1", "key-2", "key-3")
}

// checkpoint is writer g of testConcurrentWriters: it creates h and
// writes it writes times, each time with a new snapshot and two records,
// idle with a waiter every other time, completed the last time. It
// returns the handler as stored last (the zero Handler if a write failed).
func checkpoint(t *testing.T, s persistence.Store, g int, h persistence.Handler, writes int, now time.Time) persistence.Handler {
	for i := range writes {
		if i%2 == 1 {
			h.IdleSince = now.Add(-time.Duration(g) * time.Minute)
			h.Waiters = []persistence.Waiter{{ID: fmt.Sprint("w", i), Key: fmt.Sprint("key-", g%4), Deadline: now.Add(time.Duration(i) * time.Second)}}
		} else {
			h.IdleSince, h.Waiters = time.Time{}, nil
		}
		if i == writes-1 {
			h.Status = persistence.StatusCompleted
		}
		c := persistence.Change{
			Handler:  h,
			Snapshot: fmt.Appendf(nil, "snapshot %d/%d", g, i),
			Records:  records(uint64(2*i+1), uint64(2*i+2)),
			Create:   i == 0,
		}
		if i > 0 {
			c.IfOwner = ptr(h.Owner)
		}
		if err := s.Write(t.Context(), c); err != nil {
			t.Errorf("writer %d, write %d: %v", g, i, err)
			return persistence.Handler{}
		}
	}
	h.LastSeq = uint64(2 * writes)
	return h
}

// readAlong has two readers list and count while writers write, until
// the function it returns is called; they only need to not fail.
func readAlong(t *testing.T, s persistence.Store) (stop func()) {
	done := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, _, err := s.ListHandlers(t.Context(), persistence.Query{IdleOnly: true, PageSize: 5}); err != nil {
					t.Errorf("ListHandlers during writes: %v", err)
					return
				}
				if _, err := s.Count(t.Context()); err != nil {
					t.Errorf("Count during writes: %v", err)
					return
				}
			}
		})
	}
	return func() {
		close(done)
		readers.Wait()
	}
}

// testConcurrentCreate races many Creates of one handler: exactly one wins.
func testConcurrentCreate(t *testing.T, open OpenFunc) {
	const racers = 16
	s := openStore(t, open)
	id := newIDs(t, 1)[0]
	start := make(chan struct{})
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			h := newHandler(id, "wf")
			h.Owner = fmt.Sprint("replica-", i)
			errs[i] = s.Write(t.Context(), persistence.Change{Handler: h, Create: true, Records: records(1)})
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("racers %d and %d both created the handler", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, persistence.ErrExists):
			t.Fatalf("racer %d: %v, want ErrExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no racer created the handler")
	}
	if got := getHandler(t, s, id); got.Owner != fmt.Sprint("replica-", winner) || got.LastSeq != 1 {
		t.Fatalf("stored handler = owner %q, LastSeq %d; want the winner's", got.Owner, got.LastSeq)
	}
}

// testConcurrentConflicts mixes writes whose precondition fails with good
// writes at the same moment, so they likely share a commit: the failures
// must not fail, delay forever or partially apply the good ones.
func testConcurrentConflicts(t *testing.T, open OpenFunc) {
	const pairs = 16
	s := openStore(t, open)
	ids := newIDs(t, pairs+1)
	contested := newHandler(ids[pairs], "wf")
	write(t, s, persistence.Change{Handler: contested, Snapshot: []byte("original")})

	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range pairs {
		wg.Go(func() {
			<-start
			if err := s.Write(t.Context(), persistence.Change{Handler: newHandler(ids[i], "wf"), Create: true, Records: records(1)}); err != nil {
				t.Errorf("good write %d: %v", i, err)
			}
		})
		wg.Go(func() {
			<-start
			stolen := contested
			stolen.Owner = "thief"
			err := s.Write(t.Context(), persistence.Change{Handler: stolen, Snapshot: []byte("stolen"), IfOwner: ptr("thief")})
			if !errors.Is(err, persistence.ErrConflict) {
				t.Errorf("conflicting write %d: %v, want ErrConflict", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	m := model{contested.ID: contested}
	for _, id := range ids[:pairs] {
		h := newHandler(id, "wf")
		h.LastSeq = 1
		m[id] = h
	}
	checkModel(t, s, m, baseTime())
	checkSnapshot(t, s, contested.ID, []byte("original"))
}

// testConcurrentTasksAndPublish has many goroutines upsert tasks of their
// own handlers and publish events at once, some publishing the same event
// ids: every acknowledged task and event must be stored, each id logged
// once with one Seq that every publisher of it got back, and Seqs unique
// and increasing in the log.
func testConcurrentTasksAndPublish(t *testing.T, open OpenFunc) {
	const (
		workers = 16
		rounds  = 6
	)
	r := &taskPublishRace{
		s:         openStore(t, open),
		now:       baseTime(),
		ids:       newIDs(t, workers),
		shared:    make([]string, rounds), // published by every worker in round i
		m:         taskModel{},
		published: map[string][]persistence.Published{},
	}
	for i := range r.shared {
		r.shared[i] = newEventID(t)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			<-start
			r.work(t, g)
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	r.check(t)
}

// taskPublishRace is the state of testConcurrentTasksAndPublish.
type taskPublishRace struct {
	s      persistence.Store
	now    time.Time
	ids    []string // the workers' handlers
	shared []string // the event ids every worker publishes, one a round

	mu        sync.Mutex
	m         taskModel
	published map[string][]persistence.Published // id → what each Publish returned
}

// work is worker g: each round it upserts a task of its handler (and
// answers the previous round's in the same change) and publishes the
// round's shared event and one of its own.
func (r *taskPublishRace) work(t *testing.T, g int) {
	h := newHandler(r.ids[g], fmt.Sprint("wf-", g%2))
	var mine []persistence.Task
	for i := range r.shared {
		task := newTask(h, fmt.Sprint("w", i), r.now.Add(time.Duration(i)*time.Second))
		task.Assignee = fmt.Sprint("user-", (g+i)%3)
		tasks := []persistence.Task{task}
		if i > 0 {
			tasks = append(tasks, complete(mine[i-1], task.Assignee, r.now))
		}
		if err := r.s.Write(t.Context(), persistence.Change{Handler: h, Tasks: tasks}); err != nil {
			t.Errorf("worker %d, round %d: Write: %v", g, i, err)
			return
		}
		mine = append(mine, task)
		if i > 0 {
			mine[i-1] = tasks[1]
		}
		for _, id := range []string{r.shared[i], fmt.Sprintf("%s/%d", h.ID, i)} {
			if !r.publish(t, persistence.Published{ID: id, Key: "k", HandlerID: h.ID, At: r.now, Data: []byte(id)}) {
				return
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, task := range mine {
		r.m[task.ID] = task
	}
}

// publish publishes p and records what Publish returned.
func (r *taskPublishRace) publish(t *testing.T, p persistence.Published) bool {
	got, err := r.s.Publish(t.Context(), p)
	if err != nil {
		t.Errorf("Publish %s: %v", p.ID, err)
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.published[p.ID] = append(r.published[p.ID], got)
	return true
}

// check compares the log and the tasks with what the workers were told.
func (r *taskPublishRace) check(t *testing.T) {
	log, err := r.s.PublishedAfter(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(r.published); len(log) != want {
		t.Fatalf("log has %d entries, want %d (one per id)", len(log), want)
	}
	for i, p := range log {
		if i > 0 && p.Seq <= log[i-1].Seq {
			t.Fatalf("log entry %d has Seq %d, not after %d", i, p.Seq, log[i-1].Seq)
		}
		for _, got := range r.published[p.ID] {
			checkPublished(t, "what Publish returned for "+p.ID, got, p)
		}
	}
	checkTaskModel(t, r.s, r.m, false)
}
