package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// dueIDs returns the ids DueSchedules returns for before and limit.
func dueIDs(t *testing.T, s persistence.Store, before time.Time, limit int) []string {
	t.Helper()
	due, err := s.DueSchedules(t.Context(), before, limit)
	if err != nil {
		t.Fatalf("DueSchedules(%v, %d): %v", before, limit, err)
	}
	for _, sc := range due {
		if !sc.Due() || sc.NextTick.After(before) {
			t.Fatalf("DueSchedules(%v) returned %s: paused %v, next tick %v", before, sc.ID, sc.Paused, sc.NextTick)
		}
	}
	return scheduleIDs(due)
}

func checkDue(t *testing.T, s persistence.Store, what string, before time.Time, want ...string) {
	t.Helper()
	if got := dueIDs(t, s, before, 0); !slices.Equal(got, want) {
		t.Fatalf("%s: DueSchedules = %v, want %v", what, got, want)
	}
}

// testDueSchedules: DueSchedules lists the schedules that are not paused
// and have a next tick at or before the time asked, earliest first, ties
// by id, up to the limit; updates move a schedule in the index (later,
// earlier, paused, resumed, no next tick) and a delete takes it out.
func testDueSchedules(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	t0 := baseTime()
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	revs := map[string]uint64{}
	put := func(sc persistence.Schedule) {
		t.Helper()
		if rev, ok := revs[sc.ID]; ok {
			revs[sc.ID] = updateSchedule(t, s, sc, rev).Revision
			return
		}
		revs[sc.ID] = createSchedule(t, s, sc).Revision
	}
	paused := newSchedule("paused", at(1))
	paused.Paused = true
	for _, sc := range []persistence.Schedule{
		newSchedule("c", at(3)), newSchedule("b", at(3)), newSchedule("a", at(5)),
		newSchedule("early", at(-60)), newSchedule("never", time.Time{}), paused,
		// Nanoseconds apart: the order is exact.
		newSchedule("d", at(3).Add(time.Nanosecond)),
	} {
		put(sc)
	}

	checkDue(t, s, "before any", at(-61))
	checkDue(t, s, "at the earliest", at(-60), "early")
	checkDue(t, s, "at a tie", at(3), "early", "b", "c")
	checkDue(t, s, "a nanosecond later", at(3).Add(time.Nanosecond), "early", "b", "c", "d")
	checkDue(t, s, "all", at(100), "early", "b", "c", "d", "a")
	if got := dueIDs(t, s, at(100), 2); !slices.Equal(got, []string{"early", "b"}) {
		t.Fatalf("DueSchedules with limit 2 = %v, want [early b]", got)
	}
	// The next tick of a schedule in another zone compares as an instant.
	zoned := newSchedule("zoned", at(4).In(time.FixedZone("W", -5*3600)))
	put(zoned)
	checkDue(t, s, "with a zoned next tick", at(4), "early", "b", "c", "d", "zoned")

	// Later: out of the first places; earlier: first.
	moved := newSchedule("early", at(10))
	put(moved)
	checkDue(t, s, "after a move later", at(5), "b", "c", "d", "zoned", "a")
	moved.NextTick = at(-100)
	put(moved)
	checkDue(t, s, "after a move earlier", at(3), "early", "b", "c")

	// Paused: out, whatever its next tick; resumed: back at its place.
	pb := newSchedule("b", at(3))
	pb.Paused = true
	put(pb)
	checkDue(t, s, "after pausing b", at(3), "early", "c")
	pb.Paused = false
	put(pb)
	checkDue(t, s, "after resuming b", at(3), "early", "b", "c")
	resumed := paused
	resumed.Paused = false
	put(resumed)
	checkDue(t, s, "after resuming paused", at(3), "early", "paused", "b", "c")

	// No next tick (the spec ended): never due.
	ended := newSchedule("c", time.Time{})
	put(ended)
	checkDue(t, s, "after c ended", at(3), "early", "paused", "b")

	// An update that changes what is not indexed keeps the entry.
	pb.Note = "still due"
	put(pb)
	checkDue(t, s, "after a note", at(3), "early", "paused", "b")

	for _, id := range []string{"early", "b"} {
		if err := s.DeleteSchedule(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	checkDue(t, s, "after deletes", at(100), "paused", "d", "zoned", "a")
}

// CorruptSchedule checks what a store does with a schedule whose stored
// value cannot be decoded: the backend's test passes corrupt, which
// damages the stored value of the schedule id in a way of its own (the
// suite cannot reach a store's storage) and returns the store to go on
// with (s, or s opened again if the damage needed it closed). s must be
// empty. Reading it
// fails with ErrCorrupt; listings and DueSchedules return the others with
// an error that names it; an update on another revision fails; a delete
// removes it and its index entry.
func CorruptSchedule(t *testing.T, s persistence.Store, corrupt func(id string) persistence.Store) {
	t.Helper()
	ctx := t.Context()
	at := baseTime()
	for _, id := range []string{"a", "b", "c"} {
		createSchedule(t, s, newSchedule(id, at))
	}
	s = corrupt("b")

	_, err := s.GetSchedule(ctx, "b")
	wantErr(t, "GetSchedule of a damaged schedule", err, persistence.ErrCorrupt)
	all, next, err := s.ListSchedules(ctx, 0, "")
	wantErr(t, "ListSchedules with a damaged schedule", err, persistence.ErrCorrupt)
	if got := scheduleIDs(all); !slices.Equal(got, []string{"a", "c"}) || next != "" {
		t.Fatalf("ListSchedules with a damaged schedule = %v, %q; want [a c]", got, next)
	}
	// The damaged one counts in the page: the next page starts after it.
	page, next, err := s.ListSchedules(ctx, 2, "")
	wantErr(t, "first page with a damaged schedule", err, persistence.ErrCorrupt)
	if got := scheduleIDs(page); !slices.Equal(got, []string{"a"}) || next == "" {
		t.Fatalf("first page of 2 with a damaged schedule = %v, %q; want [a] and a next page", got, next)
	}
	if page, _, err = s.ListSchedules(ctx, 2, next); err != nil || !slices.Equal(scheduleIDs(page), []string{"c"}) {
		t.Fatalf("second page = %v, %v; want [c]", scheduleIDs(page), err)
	}
	due, err := s.DueSchedules(ctx, at, 0)
	wantErr(t, "DueSchedules with a damaged schedule", err, persistence.ErrCorrupt)
	if got := scheduleIDs(due); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("DueSchedules with a damaged schedule = %v, want [a c]", got)
	}
	// A store that keeps the revision apart from the value (PostgreSQL's
	// column) can still check the condition; one that keeps it in the
	// value cannot. Either way this update, on a revision the schedule
	// never had, fails.
	_, err = s.UpdateSchedule(ctx, newSchedule("b", at), 1)
	if !errors.Is(err, persistence.ErrCorrupt) && !errors.Is(err, persistence.ErrConflict) {
		t.Fatalf("UpdateSchedule of a damaged schedule on another revision: %v, want ErrCorrupt or ErrConflict", err)
	}

	if err := s.DeleteSchedule(ctx, "b"); err != nil {
		t.Fatalf("DeleteSchedule of a damaged schedule: %v", err)
	}
	checkDue(t, s, "after deleting the damaged schedule", at, "a", "c")
	if _, _, err := s.ListSchedules(ctx, 0, ""); err != nil {
		t.Fatalf("ListSchedules after deleting the damaged schedule: %v", err)
	}
	createSchedule(t, s, newSchedule("b", at))
	checkDue(t, s, "after creating it again", at, "a", "b", "c")
}
