package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/wfd-dev/wfd/persistence"
)

// testRevision: every read reports the handler's Revision; a Write that
// changes the handler gives it one no earlier state had (a deleted and
// re-created handler too), and one that changes nothing of it (a task
// upsert with the same metadata) keeps it.
func testRevision(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	id := newIDs(t, 1)[0]
	h := newHandler(id, "wf")
	write(t, s, persistence.Change{Handler: h, Create: true, Snapshot: []byte("s1"), Records: records(1)})
	seen := map[uint64]string{}
	note := func(what string) uint64 {
		t.Helper()
		got := getHandler(t, s, id).Revision
		if got == 0 {
			t.Fatalf("%s: Revision 0", what)
		}
		if prev, dup := seen[got]; dup {
			t.Fatalf("%s: Revision %d, the same as %s", what, got, prev)
		}
		seen[got] = what
		loaded, _, err := s.LoadHandler(t.Context(), id)
		if err != nil || loaded.Revision != got {
			t.Fatalf("%s: LoadHandler Revision %d (%v), GetHandler %d", what, loaded.Revision, err, got)
		}
		listed, _, err := s.ListHandlers(t.Context(), persistence.Query{})
		if err != nil || len(listed) != 1 || listed[0].Revision != got {
			t.Fatalf("%s: ListHandlers %+v (%v), want Revision %d", what, listed, err, got)
		}
		return got
	}
	created := note("created")
	h.Residency = persistence.ResidencyReleased
	write(t, s, persistence.Change{Handler: h})
	note("metadata changed")
	write(t, s, persistence.Change{Handler: h, Records: records(2)})
	note("record appended")
	write(t, s, persistence.Change{Handler: h, Snapshot: []byte("s2")})
	before := note("snapshot replaced")

	task := newTask(h, "t", baseTime())
	write(t, s, persistence.Change{Handler: h, Tasks: []persistence.Task{task}})
	if got := getHandler(t, s, id).Revision; got != before {
		t.Fatalf("a task upsert with unchanged metadata moved Revision %d to %d", before, got)
	}

	write(t, s, persistence.Change{Handler: persistence.Handler{ID: id}, Delete: true})
	write(t, s, persistence.Change{Handler: newHandler(id, "wf"), Create: true})
	if got := note("created again"); got == created {
		t.Fatalf("re-created handler has its predecessor's Revision %d", got)
	}
}

// testIfRevision: a change conditional on the revision its writer read
// is applied only while the stored handler still has it; otherwise the
// whole Write fails and nothing of it is applied.
func testIfRevision(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 2)
	id, other := ids[0], ids[1]
	h := newHandler(id, "wf")
	write(t, s, persistence.Change{Handler: h, Create: true, Snapshot: []byte("s1"), Records: records(1)},
		persistence.Change{Handler: newHandler(other, "wf"), Create: true})
	read := getHandler(t, s, id)

	// Another writer changes it after the read.
	h.Residency = persistence.ResidencyReleased
	write(t, s, persistence.Change{Handler: h, Records: records(2)})

	stale := read
	stale.Residency, stale.IdleSince = persistence.ResidencyReleased, baseTime()
	o := newHandler(other, "wf")
	o.Workflow = "changed"
	err := s.Write(t.Context(),
		persistence.Change{Handler: o},
		persistence.Change{Handler: stale, Snapshot: []byte("stale"), IfRevision: ptr(read.Revision)})
	wantErr(t, "Write over a stale read", err, persistence.ErrConflict)
	if got := getHandler(t, s, id); got.LastSeq != 2 || !got.IdleSince.IsZero() {
		t.Fatalf("a refused conditional change was applied: %+v", got)
	}
	checkSnapshot(t, s, id, []byte("s1"))
	if got := getHandler(t, s, other).Workflow; got != "wf" {
		t.Fatalf("the other change of a refused Write was applied: workflow %q", got)
	}

	fresh := getHandler(t, s, id)
	write(t, s, persistence.Change{Handler: stale, IfRevision: ptr(fresh.Revision)})
	if got := getHandler(t, s, id); got.IdleSince.IsZero() {
		t.Fatalf("a conditional change on the current revision was not applied: %+v", got)
	}

	// Within one Write, a change after another of the same handler meets
	// that change's revision, which its writer could not have read.
	now := getHandler(t, s, id)
	err = s.Write(t.Context(), persistence.Change{Handler: h}, persistence.Change{Handler: h, IfRevision: ptr(now.Revision)})
	wantErr(t, "second change of one Write on the revision read before it", err, persistence.ErrConflict)

	// A delete on a stale read fails too: the handler may be another one
	// by now.
	err = s.Write(t.Context(), persistence.Change{Handler: persistence.Handler{ID: id}, Delete: true, IfRevision: ptr(read.Revision)})
	wantErr(t, "Delete over a stale read", err, persistence.ErrConflict)
	getHandler(t, s, id)

	err = s.Write(t.Context(), persistence.Change{Handler: newHandler(newIDs(t, 1)[0], "wf"), IfRevision: ptr(uint64(1))})
	wantErr(t, "IfRevision of a handler that does not exist", err, persistence.ErrNotFound)
	err = s.Write(t.Context(), persistence.Change{Handler: newHandler(newIDs(t, 1)[0], "wf"), Create: true, IfRevision: ptr(uint64(0))})
	wantErr(t, "Create with IfRevision", err, persistence.ErrInvalid)
}

// testConcurrentIfRevision: of writers that read the same revision and
// write conditionally on it at once, exactly one succeeds.
func testConcurrentIfRevision(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	const writers = 8
	for _, id := range newIDs(t, 4) {
		write(t, s, persistence.Change{Handler: newHandler(id, "wf"), Create: true})
		read := getHandler(t, s, id)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins []int
		)
		for w := range writers {
			wg.Go(func() {
				h := read
				h.Owner = "writer-" + string(rune('a'+w))
				err := s.Write(t.Context(), persistence.Change{Handler: h, Records: records(uint64(w + 1)), IfRevision: ptr(read.Revision)})
				switch {
				case err == nil:
					mu.Lock()
					wins = append(wins, w)
					mu.Unlock()
				case !errors.Is(err, persistence.ErrConflict):
					t.Errorf("writer %d: %v, want nil or ErrConflict", w, err)
				}
			})
		}
		wg.Wait()
		if len(wins) != 1 {
			t.Fatalf("handler %s: %d conditional writers on one revision succeeded (%v), want exactly 1", id, len(wins), wins)
		}
		if got := getHandler(t, s, id); got.Owner != "writer-"+string(rune('a'+wins[0])) || got.LastSeq != uint64(wins[0]+1) {
			t.Fatalf("handler %s = owner %q, LastSeq %d; want the winner's (%d)", id, got.Owner, got.LastSeq, wins[0])
		}
	}
}

// testFinishedIsFinal: a handler stored with a terminal status takes no
// change but Delete, whoever writes (unconditional, with records, with
// tasks): its terminal record stays its last. A Write that finishes a
// handler and changes it again is refused whole.
func testFinishedIsFinal(t *testing.T, open OpenFunc) {
	for _, st := range []persistence.Status{persistence.StatusCompleted, persistence.StatusFailed, persistence.StatusCancelled} {
		t.Run(st.String(), func(t *testing.T) {
			s := openStore(t, open)
			id := newIDs(t, 1)[0]
			h := newHandler(id, "wf")
			write(t, s, persistence.Change{Handler: h, Create: true, Records: records(1)})
			done := h
			done.Status, done.CompletedAt, done.Residency = st, baseTime(), persistence.ResidencyReleased
			write(t, s, persistence.Change{Handler: done, Snapshot: []byte("final"), Records: records(2)})

			running := h
			for _, c := range []struct {
				what   string
				change persistence.Change
			}{
				{"running again", persistence.Change{Handler: running}},
				{"a record after the terminal one", persistence.Change{Handler: done, Records: records(3)}},
				{"a new snapshot", persistence.Change{Handler: done, Snapshot: []byte("later")}},
				{"the same metadata", persistence.Change{Handler: done}},
				{"a task", persistence.Change{Handler: done, Tasks: []persistence.Task{newTask(done, "t", baseTime())}}},
			} {
				err := s.Write(t.Context(), c.change)
				wantErr(t, c.what, err, persistence.ErrFinished)
				wantErr(t, c.what, err, persistence.ErrConflict)
			}
			if got := getHandler(t, s, id); got.Status != st || got.LastSeq != 2 {
				t.Fatalf("finished handler after refused changes = %s, LastSeq %d; want %s, 2", got.Status, got.LastSeq, st)
			}
			checkSnapshot(t, s, id, []byte("final"))
			recs, err := s.ReadRecords(t.Context(), id, 0, 0)
			if err != nil || len(recs) != 2 {
				t.Fatalf("records = %v (%v), want 2", recordSeqs(recs), err)
			}
			write(t, s, persistence.Change{Handler: persistence.Handler{ID: id}, Delete: true})
		})
	}
	t.Run("finished and changed in one Write", func(t *testing.T) {
		s := openStore(t, open)
		id := newIDs(t, 1)[0]
		h := newHandler(id, "wf")
		write(t, s, persistence.Change{Handler: h, Create: true, Records: records(1)})
		done := h
		done.Status, done.CompletedAt = persistence.StatusCompleted, baseTime()
		err := s.Write(t.Context(), persistence.Change{Handler: done, Records: records(2)}, persistence.Change{Handler: done, Records: records(3)})
		wantErr(t, "a change after the finishing one", err, persistence.ErrFinished)
		if got := getHandler(t, s, id); got.Status != persistence.StatusRunning || got.LastSeq != 1 {
			t.Fatalf("handler after a refused Write = %s, LastSeq %d; want running, 1", got.Status, got.LastSeq)
		}
	})
}
