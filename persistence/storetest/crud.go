package storetest

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

func testCreateGetUpdate(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 2)
	base := baseTime()

	if _, err := s.GetHandler(t.Context(), ids[0]); err == nil {
		t.Fatal("GetHandler of a handler never written: no error")
	} else {
		wantErr(t, "GetHandler(unknown)", err, persistence.ErrNotFound)
	}

	h := newHandler(ids[0], "order")
	h.WorkflowVersion = "3f2a9c"
	h.Parent = ids[1]
	h.IdleSince = base.Add(time.Minute)
	h.Waiters = []persistence.Waiter{
		{ID: "w1", Step: "ask", EventType: "answer", Match: []byte(`{"q":1}`), Deadline: base.Add(time.Hour), Key: "answer"},
		{ID: "w2", Step: "ask", EventType: "cancel"},
	}
	h.External = []string{"note", "close"}
	h.Deadline = base.Add(48 * time.Hour)
	h.LastSeq = 99 // ignored: the store maintains LastSeq
	write(t, s, persistence.Change{Handler: h, Create: true})
	want := h
	want.LastSeq = 0
	checkHandler(t, getHandler(t, s, h.ID), want)

	// Update every field; without Create, Write replaces.
	h.Workflow = "order-v2"
	h.WorkflowVersion = "v2"
	h.Status = persistence.StatusFailed
	h.Residency = persistence.ResidencyReleased
	h.Owner = ""
	h.UpdatedAt = base.Add(2 * time.Hour)
	h.CompletedAt = base.Add(2 * time.Hour)
	h.IdleSince = time.Time{}
	h.Waiters = nil
	h.External = nil
	h.Deadline = time.Time{}
	h.Error = "step ask: boom"
	h.Result = []byte(`{"ok":false}`)
	write(t, s, persistence.Change{Handler: h})
	want = h
	want.LastSeq = 0
	got := getHandler(t, s, h.ID)
	checkHandler(t, got, want)
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt location = %v, want UTC", got.CreatedAt.Location())
	}

	// Write without Create also creates (upsert).
	other := newHandler(ids[1], "order")
	write(t, s, persistence.Change{Handler: other})
	checkHandler(t, getHandler(t, s, other.ID), other)
}

func testCreateExisting(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	id := newIDs(t, 1)[0]
	h := newHandler(id, "wf")
	write(t, s, persistence.Change{Handler: h, Create: true, Snapshot: []byte("one"), Records: records(1)})

	h2 := h
	h2.Workflow = "other"
	err := s.Write(t.Context(), persistence.Change{Handler: h2, Create: true, Snapshot: []byte("two"), Records: records(2)})
	wantErr(t, "second Create", err, persistence.ErrExists)

	// Nothing of the failed change was applied.
	want := h
	want.LastSeq = 1
	checkHandler(t, getHandler(t, s, id), want)
	checkSnapshot(t, s, id, []byte("one"))
	recs, err := s.ReadRecords(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, "records after failed Create", recs, records(1))
}

func testIfOwner(t *testing.T, open OpenFunc) {
	tests := []struct {
		name    string
		stored  string // Owner of the stored handler; "-" for no handler
		ifOwner string
		wantErr error
	}{
		{"same owner", "replica-a", "replica-a", nil},
		{"other owner", "replica-a", "replica-b", persistence.ErrConflict},
		{"claim unowned", "", "", nil},
		{"unowned, expected owner", "", "replica-a", persistence.ErrConflict},
		{"owned, expected unowned", "replica-a", "", persistence.ErrConflict},
		{"no handler", "-", "replica-a", persistence.ErrNotFound},
	}
	s := openStore(t, open)
	ids := newIDs(t, len(tests))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := ids[i]
			h := newHandler(id, "wf")
			h.Owner = tt.stored
			if tt.stored != "-" {
				write(t, s, persistence.Change{Handler: h, Snapshot: []byte("before"), Records: records(1)})
			}
			next := h
			next.Owner = "replica-b"
			next.Status = persistence.StatusCompleted
			err := s.Write(t.Context(), persistence.Change{
				Handler: next, Snapshot: []byte("after"), Records: records(2), IfOwner: ptr(tt.ifOwner),
			})
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Write: %v", err)
				}
				next.LastSeq = 2
				checkHandler(t, getHandler(t, s, id), next)
				checkSnapshot(t, s, id, []byte("after"))
				return
			}
			wantErr(t, "Write", err, tt.wantErr)
			if tt.stored == "-" {
				if _, err := s.GetHandler(t.Context(), id); err == nil {
					t.Fatal("failed conditional write created the handler")
				}
				return
			}
			h.LastSeq = 1
			checkHandler(t, getHandler(t, s, id), h)
			checkSnapshot(t, s, id, []byte("before"))
		})
	}
}

func testAtomicWrite(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 3)
	existing := newHandler(ids[2], "wf")
	write(t, s, persistence.Change{Handler: existing})

	// The third change fails, so the first two must not be applied.
	err := s.Write(t.Context(),
		persistence.Change{Handler: newHandler(ids[0], "wf"), Create: true, Records: records(1)},
		persistence.Change{Handler: newHandler(ids[1], "wf"), Snapshot: []byte("s")},
		persistence.Change{Handler: existing, Create: true},
	)
	wantErr(t, "Write with a failing change", err, persistence.ErrExists)
	for _, id := range ids[:2] {
		_, err := s.GetHandler(t.Context(), id)
		wantErr(t, "GetHandler of a change in a failed Write", err, persistence.ErrNotFound)
	}
	checkCounts(t, s, model{existing.ID: existing}.counts())

	// Changes to one handler apply in order: the later sees the earlier.
	h := newHandler(ids[0], "wf")
	h2 := h
	h2.Status = persistence.StatusCompleted
	write(t, s,
		persistence.Change{Handler: h, Create: true, Records: records(1, 2)},
		persistence.Change{Handler: h2, IfOwner: ptr(h.Owner), Records: records(3)},
	)
	h2.LastSeq = 3
	checkHandler(t, getHandler(t, s, h.ID), h2)

	// An empty Write is a no-op.
	write(t, s)
}

func testInvalidChanges(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	id := newIDs(t, 1)[0]
	valid := func(edit func(c *persistence.Change)) persistence.Change {
		c := persistence.Change{Handler: newHandler(id, "wf")}
		edit(&c)
		return c
	}
	tests := []struct {
		name   string
		change persistence.Change
	}{
		{"empty id", valid(func(c *persistence.Change) { c.Handler.ID = "" })},
		{"long id", valid(func(c *persistence.Change) { c.Handler.ID = strings.Repeat("x", persistence.MaxIDLen+1) })},
		{"NUL in id", valid(func(c *persistence.Change) { c.Handler.ID = "a\x00b" })},
		{"empty workflow", valid(func(c *persistence.Change) { c.Handler.Workflow = "" })},
		{"NUL in workflow", valid(func(c *persistence.Change) { c.Handler.Workflow = "w\x00" })},
		{"unspecified status", valid(func(c *persistence.Change) { c.Handler.Status = 0 })},
		{"unknown status", valid(func(c *persistence.Change) { c.Handler.Status = 9 })},
		{"unspecified residency", valid(func(c *persistence.Change) { c.Handler.Residency = 0 })},
		{"time out of range", valid(func(c *persistence.Change) { c.Handler.UpdatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) })},
		{"empty waiter id", valid(func(c *persistence.Change) { c.Handler.Waiters = []persistence.Waiter{{Key: "k"}} })},
		{"duplicate waiter id", valid(func(c *persistence.Change) {
			c.Handler.Waiters = []persistence.Waiter{{ID: "w"}, {ID: "w"}}
		})},
		{"NUL in waiter key", valid(func(c *persistence.Change) { c.Handler.Waiters = []persistence.Waiter{{ID: "w", Key: "k\x00"}} })},
		{"long waiter key", valid(func(c *persistence.Change) {
			c.Handler.Waiters = []persistence.Waiter{{ID: "w", Key: strings.Repeat("k", persistence.MaxKeyLen+1)}}
		})},
		{"seq 0", valid(func(c *persistence.Change) { c.Records = []persistence.Record{{Seq: 0}} })},
		{"decreasing seqs", valid(func(c *persistence.Change) { c.Records = records(2, 1) })},
		{"repeated seq", valid(func(c *persistence.Change) { c.Records = records(1, 1) })},
		{"Create with IfOwner", valid(func(c *persistence.Change) { c.Create, c.IfOwner = true, ptr("a") })},
		{"Delete with Snapshot", valid(func(c *persistence.Change) { c.Delete, c.Snapshot = true, []byte("s") })},
		{"Delete with Records", valid(func(c *persistence.Change) { c.Delete, c.Records = true, records(1) })},
		{"Delete without id", valid(func(c *persistence.Change) { c.Delete, c.Handler.ID = true, "" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Write(t.Context(), persistence.Change{Handler: newHandler(newIDs(t, 1)[0], "wf")}, tt.change)
			wantErr(t, "Write", err, persistence.ErrInvalid)
		})
	}
	checkCounts(t, s, model{}.counts())
}

func testSnapshot(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 2)
	id := ids[0]
	h := newHandler(id, "wf")

	_, err := s.LoadSnapshot(t.Context(), id)
	wantErr(t, "LoadSnapshot(unknown)", err, persistence.ErrNotFound)

	steps := []struct {
		name     string
		snapshot []byte
		want     []byte
	}{
		{"no snapshot yet", nil, nil},
		{"first snapshot", []byte("state 1"), []byte("state 1")},
		{"nil keeps it", nil, []byte("state 1")},
		{"replace", bytes.Repeat([]byte("state 2 "), 1000), bytes.Repeat([]byte("state 2 "), 1000)},
		{"empty replaces too", []byte{}, []byte{}},
		{"and nil keeps empty", nil, []byte{}},
	}
	_, _, err = s.LoadHandler(t.Context(), id)
	wantErr(t, "LoadHandler(unknown)", err, persistence.ErrNotFound)

	for i, st := range steps {
		h.UpdatedAt = h.CreatedAt.Add(time.Duration(i) * time.Second)
		write(t, s, persistence.Change{Handler: h, Snapshot: st.snapshot})
		got, err := s.LoadSnapshot(t.Context(), id)
		if err != nil {
			t.Fatalf("%s: LoadSnapshot: %v", st.name, err)
		}
		if !bytes.Equal(got, st.want) || (got == nil) != (st.want == nil) {
			t.Fatalf("%s: LoadSnapshot = %.20q (nil %v), want %.20q (nil %v)", st.name, got, got == nil, st.want, st.want == nil)
		}
		// LoadHandler reads the same snapshot and the metadata with it.
		meta, got, err := s.LoadHandler(t.Context(), id)
		if err != nil {
			t.Fatalf("%s: LoadHandler: %v", st.name, err)
		}
		if !bytes.Equal(got, st.want) || (got == nil) != (st.want == nil) {
			t.Fatalf("%s: LoadHandler snapshot = %.20q (nil %v), want %.20q (nil %v)", st.name, got, got == nil, st.want, st.want == nil)
		}
		checkHandler(t, meta, h)
	}

	// The returned slice is the caller's: changing it changes nothing stored.
	snap := []byte("mine")
	write(t, s, persistence.Change{Handler: newHandler(ids[1], "wf"), Snapshot: snap})
	got, _ := s.LoadSnapshot(t.Context(), ids[1])
	got[0] = 'X'
	snap[0] = 'Y'
	checkSnapshot(t, s, ids[1], []byte("mine"))
}

func checkSnapshot(t *testing.T, s persistence.Store, id string, want []byte) {
	t.Helper()
	got, err := s.LoadSnapshot(t.Context(), id)
	if err != nil {
		t.Fatalf("LoadSnapshot(%s): %v", id, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("LoadSnapshot(%s) = %q, want %q", id, got, want)
	}
}

func testDelete(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ids := newIDs(t, 3)
	now := baseTime()
	m := model{}
	for i, id := range ids {
		h := newHandler(id, "wf")
		h.IdleSince = now.Add(-time.Duration(i) * time.Minute)
		h.Waiters = []persistence.Waiter{{ID: "w", Key: "k", Deadline: now.Add(time.Minute)}}
		write(t, s, persistence.Change{Handler: h, Snapshot: []byte("s"), Records: records(1, 2)})
		h.LastSeq = 2
		m[id] = h
	}

	err := s.Write(t.Context(), persistence.Change{Handler: persistence.Handler{ID: ids[0]}, Delete: true, IfOwner: ptr("someone else")})
	wantErr(t, "Delete with the wrong owner", err, persistence.ErrConflict)
	checkModel(t, s, m, now)

	write(t, s, persistence.Change{Handler: persistence.Handler{ID: ids[0]}, Delete: true, IfOwner: ptr("replica-a")})
	delete(m, ids[0])
	checkModel(t, s, m, now)
	_, err = s.LoadSnapshot(t.Context(), ids[0])
	wantErr(t, "LoadSnapshot after Delete", err, persistence.ErrNotFound)
	_, err = s.ReadRecords(t.Context(), ids[0], 0, 0)
	wantErr(t, "ReadRecords after Delete", err, persistence.ErrNotFound)

	err = s.Write(t.Context(), persistence.Change{Handler: persistence.Handler{ID: ids[0]}, Delete: true})
	wantErr(t, "Delete twice", err, persistence.ErrNotFound)

	// A handler created again under a deleted id starts afresh: no old
	// records, no old snapshot.
	h := newHandler(ids[0], "wf")
	write(t, s, persistence.Change{Handler: h, Create: true, Records: records(1)})
	recs, err := s.ReadRecords(t.Context(), ids[0], 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, "records of a re-created handler", recs, records(1))
	checkSnapshot(t, s, ids[0], nil)
	h.LastSeq = 1
	m[ids[0]] = h
	checkModel(t, s, m, now)
}
