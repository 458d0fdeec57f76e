package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// slotsStep applies c to k and fails the test on an error.
func slotsStep(t *testing.T, s persistence.Slots, k persistence.SlotKey, c persistence.SlotChange) persistence.SlotResult {
	t.Helper()
	res, err := s.UpdateSlots(t.Context(), k, c)
	if err != nil {
		t.Fatalf("UpdateSlots(%s, %+v): %v", k, c, err)
	}
	return res
}

func entryIDs(es []persistence.SlotEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.HandlerID
	}
	return out
}

// checkSlots checks k's holders and queue, in order.
func checkSlots(t *testing.T, s persistence.Slots, k persistence.SlotKey, what string, holders, queue []string) {
	t.Helper()
	h, q, err := s.ListSlots(t.Context(), k, 0)
	if err != nil {
		t.Fatalf("%s: ListSlots: %v", what, err)
	}
	if !slices.Equal(entryIDs(h), holders) || !slices.Equal(entryIDs(q), queue) {
		t.Fatalf("%s: holders %v queue %v, want %v and %v", what, entryIDs(h), entryIDs(q), holders, queue)
	}
	for i, id := range queue {
		if pos, err := s.SlotOf(t.Context(), k, id); err != nil || pos != i+1 {
			t.Fatalf("%s: SlotOf(%s) = %d, %v, want %d", what, id, pos, err, i+1)
		}
	}
	for _, id := range holders {
		if pos, err := s.SlotOf(t.Context(), k, id); err != nil || pos != 0 {
			t.Fatalf("%s: SlotOf(%s) = %d, %v, want 0 (holding)", what, id, pos, err)
		}
	}
}

// checkPending checks PendingSlots.
func checkPending(t *testing.T, s persistence.Slots, what string, want ...persistence.SlotPending) {
	t.Helper()
	got, err := s.PendingSlots(t.Context(), 0)
	if err != nil {
		t.Fatalf("%s: PendingSlots: %v", what, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: PendingSlots = %+v, want %+v", what, got, want)
	}
	for i := range got {
		if got[i].SlotKey != want[i].SlotKey || got[i].HandlerID != want[i].HandlerID || !got[i].At.Equal(want[i].At) || !got[i].Pending {
			t.Fatalf("%s: PendingSlots = %+v, want %+v", what, got, want)
		}
	}
}

// testSlots: a key admits up to its maximum, queues the rest in order and
// admits the head when a holder is released; an enqueue repeated stays
// where it is; a refusing enqueue changes nothing when it cannot be
// admitted; a release of an absent handler is no error; a holder admitted
// from the queue is pending until told.
func testSlots(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	k := persistence.SlotKey{Workflow: "wf", Key: "acme"}
	lim := persistence.SlotLimit{Max: 2}
	for i, id := range []string{"a", "b", "c", "d"} {
		res := slotsStep(t, s, k, persistence.SlotChange{Enqueue: id, Limit: lim, Now: now})
		wantPos := max(0, i-1)
		if res.Position != wantPos || res.Existed || res.Refused {
			t.Fatalf("enqueue %s: %+v, want position %d", id, res, wantPos)
		}
		if len(res.Admitted) != 0 {
			t.Fatalf("enqueue %s: admitted %v, want none from the queue", id, res.Admitted)
		}
	}
	checkSlots(t, s, k, "four on a max of two", []string{"a", "b"}, []string{"c", "d"})
	if res := slotsStep(t, s, k, persistence.SlotChange{Enqueue: "d", Limit: lim, Now: now}); !res.Existed || res.Position != 2 || len(res.Admitted) != 0 {
		t.Fatalf("enqueue d again: %+v, want it where it was (2nd)", res)
	}
	if res := slotsStep(t, s, k, persistence.SlotChange{Enqueue: "e", Refuse: true, Limit: lim, Now: now}); !res.Refused {
		t.Fatalf("refusing enqueue on a full key: %+v, want refused", res)
	}
	if _, err := s.SlotOf(t.Context(), k, "e"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("SlotOf(refused) = %v, want ErrNotFound", err)
	}
	// A change that holds admits no one, whatever its limit says.
	if res := slotsStep(t, s, k, persistence.SlotChange{Hold: true, Now: now}); len(res.Admitted) != 0 {
		t.Fatalf("a holding change admitted %v", res.Admitted)
	}
	res := slotsStep(t, s, k, persistence.SlotChange{Release: "a", Limit: lim, Now: now.Add(time.Second)})
	if !slices.Equal(res.Admitted, []string{"c"}) || res.Holding != 2 || res.Queued != 1 {
		t.Fatalf("release a: %+v, want c admitted, 2 holding, 1 queued", res)
	}
	checkSlots(t, s, k, "after a's release", []string{"b", "c"}, []string{"d"})
	// c, admitted from the queue, is pending until it is told; b, admitted
	// at its enqueue, never was.
	checkPending(t, s, "after c's admission", persistence.SlotPending{SlotKey: k, SlotEntry: persistence.SlotEntry{HandlerID: "c", At: now.Add(time.Second), Pending: true}})
	slotsStep(t, s, k, persistence.SlotChange{Delivered: "c", Limit: lim, Now: now})
	slotsStep(t, s, k, persistence.SlotChange{Delivered: "b", Limit: lim, Now: now}) // not pending: nothing
	checkPending(t, s, "after c was told")
	// A queued handler released (cancelled while it waited) leaves the queue.
	slotsStep(t, s, k, persistence.SlotChange{Release: "d", Limit: lim, Now: now})
	slotsStep(t, s, k, persistence.SlotChange{Release: "nobody", Limit: lim, Now: now})
	checkSlots(t, s, k, "after d left the queue", []string{"b", "c"}, nil)
	// A pending holder released is no longer pending.
	slotsStep(t, s, k, persistence.SlotChange{Enqueue: "p1", Limit: lim, Now: now})
	slotsStep(t, s, k, persistence.SlotChange{Release: "c", Limit: lim, Now: now})
	checkPending(t, s, "p1 admitted", persistence.SlotPending{SlotKey: k, SlotEntry: persistence.SlotEntry{HandlerID: "p1", At: now, Pending: true}})
	slotsStep(t, s, k, persistence.SlotChange{Release: "p1", Limit: lim, Now: now})
	checkPending(t, s, "p1 released")
	slotsStep(t, s, k, persistence.SlotChange{Enqueue: "c", Limit: lim, Now: now})
	checkSlots(t, s, k, "c back", []string{"b", "c"}, nil)
}

// testSlotKeys: SlotKeys lists the keys with their counts, in order, from
// after the one given; the same key of another workflow is another key; a
// key left empty is not listed; Max 0 admits everyone.
func testSlotKeys(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	k := persistence.SlotKey{Workflow: "wf", Key: "acme"}
	lim := persistence.SlotLimit{Max: 2}
	for _, id := range []string{"b", "c"} {
		slotsStep(t, s, k, persistence.SlotChange{Enqueue: id, Limit: lim, Now: now})
	}
	other := persistence.SlotKey{Workflow: "wf2", Key: "acme"}
	if res := slotsStep(t, s, other, persistence.SlotChange{Enqueue: "x", Limit: persistence.SlotLimit{Max: 1}, Now: now}); res.Position != 0 || res.Holding != 1 {
		t.Fatalf("another workflow's key: %+v", res)
	}
	keys, err := s.SlotKeys(t.Context(), persistence.SlotKey{}, 0)
	if err != nil || len(keys) != 2 || keys[0].SlotKey != k || keys[0].Holding != 2 || keys[1].SlotKey != other {
		t.Fatalf("SlotKeys = %+v, %v, want wf[acme] holding 2 and wf2[acme]", keys, err)
	}
	if after, err := s.SlotKeys(t.Context(), k, 0); err != nil || len(after) != 1 || after[0].SlotKey != other {
		t.Fatalf("SlotKeys after %s = %+v, %v", k, after, err)
	}
	for _, id := range []string{"b", "c"} {
		slotsStep(t, s, k, persistence.SlotChange{Release: id, Limit: lim, Now: now})
	}
	if keys, err := s.SlotKeys(t.Context(), persistence.SlotKey{}, 0); err != nil || len(keys) != 1 || keys[0].SlotKey != other {
		t.Fatalf("SlotKeys after the key emptied = %+v, %v, want only wf2's", keys, err)
	}
	// Max 0: no maximum.
	for _, id := range []string{"m1", "m2", "m3"} {
		if res := slotsStep(t, s, k, persistence.SlotChange{Enqueue: id, Now: now}); res.Position != 0 {
			t.Fatalf("no maximum: %s at %d", id, res.Position)
		}
	}
}

// testSlotsRate: a rate of two a minute admits two, then holds the queue
// back until the first admission is a minute old (NextDue, DueSlots); a
// refusing enqueue within the window is refused; a maximum and a rate
// hold together.
func testSlotsRate(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	k := persistence.SlotKey{Workflow: "wf", Key: "rate"}
	lim := persistence.SlotLimit{Rate: 2, Per: time.Minute}
	for i, id := range []string{"a", "b", "c", "d"} {
		res := slotsStep(t, s, k, persistence.SlotChange{Enqueue: id, Limit: lim, Now: t0.Add(time.Duration(i) * time.Second)})
		if want := max(0, i-1); res.Position != want {
			t.Fatalf("enqueue %s: position %d, want %d", id, res.Position, want)
		}
		if i >= 2 && !res.NextDue.Equal(t0.Add(time.Minute)) {
			t.Fatalf("enqueue %s: next due %v, want %v", id, res.NextDue, t0.Add(time.Minute))
		}
	}
	if res := slotsStep(t, s, k, persistence.SlotChange{Enqueue: "r", Refuse: true, Limit: lim, Now: t0.Add(5 * time.Second)}); !res.Refused || !res.NextDue.Equal(t0.Add(time.Minute)) {
		t.Fatalf("a refusing enqueue behind a queue: %+v, want refused, next due at %v", res, t0.Add(time.Minute))
	}
	due, err := s.DueSlots(t.Context(), t0.Add(59*time.Second), 0)
	if err != nil || len(due) != 0 {
		t.Fatalf("DueSlots before the window ends = %v, %v, want none", due, err)
	}
	due, err = s.DueSlots(t.Context(), t0.Add(time.Minute), 0)
	if err != nil || !slices.Equal(due, []persistence.SlotKey{k}) {
		t.Fatalf("DueSlots at the window's end = %v, %v, want %s", due, err, k)
	}
	// A change at the due time admits the head; b's admission (at t0+1s)
	// still counts, so d waits until t0+1m1s.
	res := slotsStep(t, s, k, persistence.SlotChange{Limit: lim, Now: t0.Add(time.Minute)})
	if !slices.Equal(res.Admitted, []string{"c"}) || !res.NextDue.Equal(t0.Add(time.Minute+time.Second)) {
		t.Fatalf("at the window's end: %+v, want c admitted and d due at +1m1s", res)
	}
	res = slotsStep(t, s, k, persistence.SlotChange{Limit: lim, Now: t0.Add(2 * time.Minute)})
	if !slices.Equal(res.Admitted, []string{"d"}) || !res.NextDue.IsZero() || res.Queued != 0 {
		t.Fatalf("later: %+v, want d admitted and nothing due", res)
	}
	if due, err := s.DueSlots(t.Context(), t0.Add(time.Hour), 0); err != nil || len(due) != 0 {
		t.Fatalf("DueSlots with an empty queue = %v, %v", due, err)
	}
}

// testSlotsRateRefused: a refusal by the rate alone says when to retry; a
// maximum and a rate hold together, and a full key is not due.
func testSlotsRateRefused(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	lim := persistence.SlotLimit{Rate: 2, Per: time.Minute}
	// With an empty queue, a refusal by the rate alone says when to retry.
	k3 := persistence.SlotKey{Workflow: "wf", Key: "refusing"}
	for i, id := range []string{"x", "y"} {
		slotsStep(t, s, k3, persistence.SlotChange{Enqueue: id, Refuse: true, Limit: lim, Now: t0.Add(time.Duration(i) * time.Second)})
	}
	if res := slotsStep(t, s, k3, persistence.SlotChange{Enqueue: "z", Refuse: true, Limit: lim, Now: t0.Add(2 * time.Second)}); !res.Refused || !res.NextDue.Equal(t0.Add(time.Minute)) {
		t.Fatalf("a refusal by the rate: %+v, want next due at %v", res, t0.Add(time.Minute))
	}
	// Max and rate: a full key is not due (a release admits, not a time).
	k2 := persistence.SlotKey{Workflow: "wf", Key: "both"}
	both := persistence.SlotLimit{Max: 1, Rate: 10, Per: time.Minute}
	slotsStep(t, s, k2, persistence.SlotChange{Enqueue: "p", Limit: both, Now: t0})
	if res := slotsStep(t, s, k2, persistence.SlotChange{Enqueue: "q", Limit: both, Now: t0}); res.Position != 1 || !res.NextDue.IsZero() {
		t.Fatalf("behind a full key: %+v, want queued with nothing due", res)
	}
	if res := slotsStep(t, s, k2, persistence.SlotChange{Release: "p", Limit: both, Now: t0}); !slices.Equal(res.Admitted, []string{"q"}) {
		t.Fatalf("release p: %+v, want q admitted", res)
	}
}

// testInvalidSlots: a bad key or limit is ErrInvalid and stores nothing.
func testInvalidSlots(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	now := time.Now()
	for _, tc := range []struct {
		name string
		k    persistence.SlotKey
		lim  persistence.SlotLimit
	}{
		{"no workflow", persistence.SlotKey{Key: "k"}, persistence.SlotLimit{Max: 1}},
		{"long key", persistence.SlotKey{Workflow: "wf", Key: strings.Repeat("k", persistence.MaxSlotKeyLen+1)}, persistence.SlotLimit{Max: 1}},
		{"NUL in key", persistence.SlotKey{Workflow: "wf", Key: "a\x00b"}, persistence.SlotLimit{Max: 1}},
		{"not UTF-8", persistence.SlotKey{Workflow: "wf", Key: "\xff"}, persistence.SlotLimit{Max: 1}},
		{"negative max", persistence.SlotKey{Workflow: "wf", Key: "k"}, persistence.SlotLimit{Max: -1}},
		{"rate without interval", persistence.SlotKey{Workflow: "wf", Key: "k"}, persistence.SlotLimit{Rate: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.UpdateSlots(t.Context(), tc.k, persistence.SlotChange{Enqueue: "h", Limit: tc.lim, Now: now})
			if !errors.Is(err, persistence.ErrInvalid) {
				t.Fatalf("UpdateSlots = %v, want ErrInvalid", err)
			}
		})
	}
	if keys, err := s.SlotKeys(t.Context(), persistence.SlotKey{}, 0); err != nil || len(keys) != 0 {
		t.Fatalf("SlotKeys after refusals = %+v, %v, want none", keys, err)
	}
}

// testConcurrentSlots: 40 handlers enqueued at once on a key of max 3;
// then each holder is released as it is admitted. At no point do more
// than 3 hold a slot, every handler is admitted exactly once, and the
// queue is served in the order it was filled.
func testConcurrentSlots(t *testing.T, open OpenFunc) {
	concurrentSlots(t, []persistence.Slots{openStore(t, open)})
}

func concurrentSlots(t *testing.T, stores []persistence.Slots) {
	t.Helper()
	k := persistence.SlotKey{Workflow: "wf", Key: "hot"}
	lim := persistence.SlotLimit{Max: 3}
	const n = 40
	var (
		mu       sync.Mutex
		admitted = map[string]int{}
		order    []string
		wg       sync.WaitGroup
		errs     = make(chan error, n)
	)
	note := func(ids []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			admitted[id]++
			order = append(order, id)
		}
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[i%len(stores)]
			res, err := s.UpdateSlots(t.Context(), k, persistence.SlotChange{Enqueue: fmt.Sprint("h", i), Limit: lim, Now: time.Now()})
			if err == nil && res.Holding > lim.Max {
				err = fmt.Errorf("%d holding, more than %d", res.Holding, lim.Max)
			}
			if err != nil {
				errs <- err
				return
			}
			if res.Position == 0 {
				note([]string{fmt.Sprint("h", i)})
			}
			note(res.Admitted)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	holders, queue, err := stores[0].ListSlots(t.Context(), k, n)
	if err != nil || len(holders) != lim.Max || len(queue) != n-lim.Max {
		t.Fatalf("after %d enqueues: %d holding, %d queued, %v", n, len(holders), len(queue), err)
	}
	wantOrder := append(entryIDs(holders), entryIDs(queue)...)
	// Release the holders one at a time (through each store in turn)
	// until everyone has been admitted.
	for i := 0; ; i++ {
		h, _, err := stores[0].ListSlots(t.Context(), k, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) == 0 {
			break
		}
		res, err := stores[i%len(stores)].UpdateSlots(t.Context(), k, persistence.SlotChange{Release: h[0].HandlerID, Limit: lim, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Holding > lim.Max {
			t.Fatalf("%d holding after releasing %s", res.Holding, h[0].HandlerID)
		}
		note(res.Admitted)
	}
	// The admissions of the enqueue phase came in any order; the queue's
	// are in its order.
	order = append(entryIDs(holders), order[lim.Max:]...)
	for i := range n {
		if id := fmt.Sprint("h", i); admitted[id] != 1 {
			t.Fatalf("%s admitted %d times, want once", id, admitted[id])
		}
	}
	if !slices.Equal(order, wantOrder) {
		t.Fatalf("admitted in the order %v, want the queue's %v", order, wantOrder)
	}
}

// testSlotsAcrossReplicas is testConcurrentSlots through two replicas of
// one database.
func testSlotsAcrossReplicas(t *testing.T, replicas ReplicasFunc) {
	open := replicas(t)
	concurrentSlots(t, []persistence.Slots{openStore(t, open), openStore(t, open)})
}
