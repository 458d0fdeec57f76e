package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// newSchedule returns a schedule with every field set, due at next
// (zero: never).
func newSchedule(id string, next time.Time) persistence.Schedule {
	t := baseTime()
	return persistence.Schedule{
		ID:   id,
		Cron: "*/5 * * * *", TimeZone: "Europe/Berlin",
		Interval: 0, Phase: 0,
		StartAt: t.Add(-time.Hour), EndAt: t.Add(365 * 24 * time.Hour),
		Workflow: "report", WorkflowVersion: "v2", Input: []byte(`{"to":"ops"}`),
		Overlap: "buffer_one", CatchupWindow: 90 * time.Second,
		Note: "nightly report", Owner: "subject-a",
		CreatedAt: t, UpdatedAt: t.Add(time.Second),
		NextTick: next, State: []byte(`{"last":"` + id + `"}`),
	}
}

func createSchedule(t *testing.T, s persistence.Store, sc persistence.Schedule) persistence.Schedule {
	t.Helper()
	got, err := s.CreateSchedule(t.Context(), sc)
	if err != nil {
		t.Fatalf("CreateSchedule(%s): %v", sc.ID, err)
	}
	return got
}

func updateSchedule(t *testing.T, s persistence.Store, sc persistence.Schedule, rev uint64) persistence.Schedule {
	t.Helper()
	got, err := s.UpdateSchedule(t.Context(), sc, rev)
	if err != nil {
		t.Fatalf("UpdateSchedule(%s, %d): %v", sc.ID, rev, err)
	}
	return got
}

// checkSchedule fails the test unless the stored schedule want.ID is
// want, revision included.
func checkSchedule(t *testing.T, s persistence.Store, want persistence.Schedule) {
	t.Helper()
	got, err := s.GetSchedule(t.Context(), want.ID)
	if err != nil {
		t.Fatalf("GetSchedule(%s): %v", want.ID, err)
	}
	if d := diffSchedule(got, want); d != "" {
		t.Fatalf("schedule %s: %s", want.ID, d)
	}
}

// diffSchedule describes the first difference between two schedules, or
// returns "". Times compare as instants and must come back in UTC; bytes
// by content (nil equals empty).
func diffSchedule(got, want persistence.Schedule) string {
	type field struct {
		name      string
		got, want any
		equal     bool
	}
	fields := []field{
		{"ID", got.ID, want.ID, got.ID == want.ID},
		{"Cron", got.Cron, want.Cron, got.Cron == want.Cron},
		{"TimeZone", got.TimeZone, want.TimeZone, got.TimeZone == want.TimeZone},
		{"Interval", got.Interval, want.Interval, got.Interval == want.Interval},
		{"Phase", got.Phase, want.Phase, got.Phase == want.Phase},
		{"Workflow", got.Workflow, want.Workflow, got.Workflow == want.Workflow},
		{"WorkflowVersion", got.WorkflowVersion, want.WorkflowVersion, got.WorkflowVersion == want.WorkflowVersion},
		{"Input", got.Input, want.Input, bytes.Equal(got.Input, want.Input)},
		{"Overlap", got.Overlap, want.Overlap, got.Overlap == want.Overlap},
		{"CatchupWindow", got.CatchupWindow, want.CatchupWindow, got.CatchupWindow == want.CatchupWindow},
		{"Paused", got.Paused, want.Paused, got.Paused == want.Paused},
		{"Note", got.Note, want.Note, got.Note == want.Note},
		{"Owner", got.Owner, want.Owner, got.Owner == want.Owner},
		{"State", got.State, want.State, bytes.Equal(got.State, want.State)},
		{"Revision", got.Revision, want.Revision, got.Revision == want.Revision},
	}
	for _, tm := range []struct {
		name      string
		got, want time.Time
	}{
		{"StartAt", got.StartAt, want.StartAt}, {"EndAt", got.EndAt, want.EndAt}, {"CreatedAt", got.CreatedAt, want.CreatedAt},
		{"UpdatedAt", got.UpdatedAt, want.UpdatedAt}, {"NextTick", got.NextTick, want.NextTick},
	} {
		fields = append(fields, field{tm.name, tm.got, tm.want,
			tm.got.Equal(tm.want) && (tm.got.IsZero() || tm.got.Location() == time.UTC)})
	}
	for _, f := range fields {
		if !f.equal {
			return fmt.Sprintf("%s = %v, want %v", f.name, f.got, f.want)
		}
	}
	return ""
}

func scheduleIDs(ss []persistence.Schedule) []string {
	ids := make([]string, len(ss))
	for i, sc := range ss {
		ids[i] = sc.ID
	}
	return ids
}

// testSchedules: a schedule is created, read, updated on its revision and
// deleted, with the documented error for each condition that does not
// hold; revisions grow and never come back, not even for a schedule
// deleted and created again; the store keeps its own copies of the
// bytes it is given.
func testSchedules(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	a := newSchedule("nightly", baseTime().Add(time.Minute))

	_, err := s.GetSchedule(ctx, a.ID)
	wantErr(t, "GetSchedule of an unknown schedule", err, persistence.ErrNotFound)
	_, err = s.UpdateSchedule(ctx, a, 1)
	wantErr(t, "UpdateSchedule of an unknown schedule", err, persistence.ErrNotFound)
	wantErr(t, "DeleteSchedule of an unknown schedule", s.DeleteSchedule(ctx, a.ID), persistence.ErrNotFound)

	a.Revision = 12345 // the store's to set
	created := createSchedule(t, s, a)
	if created.Revision == 0 || created.Revision == 12345 {
		t.Fatalf("CreateSchedule returned revision %d, want one of the store's", created.Revision)
	}
	want := a
	want.Revision = created.Revision
	want.Input, want.State = bytes.Clone(a.Input), bytes.Clone(a.State)
	if d := diffSchedule(created, want); d != "" {
		t.Fatalf("CreateSchedule returned %s", d)
	}
	checkSchedule(t, s, want)
	a.Input[2], a.State[2] = 'X', 'X' // the store has its own copies
	checkSchedule(t, s, want)

	_, err = s.CreateSchedule(ctx, newSchedule(a.ID, time.Time{}))
	wantErr(t, "CreateSchedule of an existing id", err, persistence.ErrExists)
	checkSchedule(t, s, want)

	next := want
	next.State, next.NextTick, next.Note = []byte(`{"last":"2"}`), want.NextTick.Add(time.Hour), ""
	updated := updateSchedule(t, s, next, want.Revision)
	if updated.Revision <= want.Revision {
		t.Fatalf("revision after an update = %d, want more than %d", updated.Revision, want.Revision)
	}
	next.Revision = updated.Revision
	checkSchedule(t, s, next)
	_, err = s.UpdateSchedule(ctx, next, want.Revision)
	wantErr(t, "UpdateSchedule on a replaced revision", err, persistence.ErrConflict)
	checkSchedule(t, s, next)

	if err := s.DeleteSchedule(ctx, a.ID); err != nil {
		t.Fatalf("DeleteSchedule: %v", err)
	}
	_, err = s.GetSchedule(ctx, a.ID)
	wantErr(t, "GetSchedule after delete", err, persistence.ErrNotFound)
	wantErr(t, "DeleteSchedule of a deleted schedule", s.DeleteSchedule(ctx, a.ID), persistence.ErrNotFound)

	// Created again, it has a revision of its own: an update read before
	// the delete cannot overwrite it.
	again := createSchedule(t, s, newSchedule(a.ID, time.Time{}))
	if again.Revision <= next.Revision {
		t.Fatalf("revision of a schedule created again = %d, want more than %d", again.Revision, next.Revision)
	}
	_, err = s.UpdateSchedule(ctx, next, next.Revision)
	wantErr(t, "UpdateSchedule on the revision of a deleted schedule", err, persistence.ErrConflict)
	checkSchedule(t, s, again)
}

// testInvalidSchedules: schedules the store cannot keep are refused with
// ErrInvalid, and nothing of them is stored.
func testInvalidSchedules(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	base := newSchedule("ok", time.Time{})
	stored := createSchedule(t, s, base)
	for _, c := range []struct {
		name string
		edit func(*persistence.Schedule)
	}{
		{"empty id", func(sc *persistence.Schedule) { sc.ID = "" }},
		{"long id", func(sc *persistence.Schedule) { sc.ID = strings.Repeat("x", persistence.MaxScheduleIDLen+1) }},
		{"NUL in the id", func(sc *persistence.Schedule) { sc.ID = "a\x00b" }},
		{"no workflow", func(sc *persistence.Schedule) { sc.Workflow = "" }},
		{"negative interval", func(sc *persistence.Schedule) { sc.Interval = -time.Second }},
		{"negative catch-up window", func(sc *persistence.Schedule) { sc.CatchupWindow = -time.Second }},
		{"long cron", func(sc *persistence.Schedule) { sc.Cron = strings.Repeat("*", persistence.MaxCronLen+1) }},
		{"note not UTF-8", func(sc *persistence.Schedule) { sc.Note = "\xff" }},
		{"large input", func(sc *persistence.Schedule) { sc.Input = make([]byte, persistence.MaxScheduleInputLen+1) }},
		{"year 10000", func(sc *persistence.Schedule) { sc.NextTick = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
	} {
		sc := base
		sc.ID = "bad"
		c.edit(&sc)
		_, err := s.CreateSchedule(ctx, sc)
		wantErr(t, "CreateSchedule with "+c.name, err, persistence.ErrInvalid)
		sc.ID = base.ID
		c.edit(&sc)
		_, err = s.UpdateSchedule(ctx, sc, stored.Revision)
		wantErr(t, "UpdateSchedule with "+c.name, err, persistence.ErrInvalid)
	}
	if all, _, err := s.ListSchedules(ctx, 0, ""); err != nil || !slices.Equal(scheduleIDs(all), []string{"ok"}) {
		t.Fatalf("ListSchedules after refused calls = %v, %v; want [ok]", scheduleIDs(all), err)
	}
	checkSchedule(t, s, stored)
}

// testConcurrentScheduleUpdates: several writers (replicas recording the
// same tick) update one schedule on the revision they all read: exactly
// one wins, the others fail with ErrConflict, and the schedule is the
// winner's. Round after round, on the winner's revision.
func testConcurrentScheduleUpdates(t *testing.T, open OpenFunc) {
	const writers, rounds = 8, 5
	s := openStore(t, open)
	read := createSchedule(t, s, newSchedule("contended", baseTime()))
	for round := range rounds {
		errs := make([]error, writers)
		results := make([]persistence.Schedule, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				sc := read
				sc.State = fmt.Appendf(nil, `{"round":%d,"writer":%d}`, round, w)
				sc.NextTick = read.NextTick.Add(time.Duration(w+1) * time.Minute)
				<-start
				results[w], errs[w] = s.UpdateSchedule(t.Context(), sc, read.Revision)
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
			case err == nil:
				winner = w
			case !errors.Is(err, persistence.ErrConflict):
				t.Fatalf("round %d: writer %d: %v, want nil or ErrConflict", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		checkSchedule(t, s, results[winner])
		due, err := s.DueSchedules(t.Context(), results[winner].NextTick, 0)
		if err != nil || len(due) != 1 || due[0].Revision != results[winner].Revision {
			t.Fatalf("round %d: DueSchedules = %v, %v; want the winner's schedule once", round, due, err)
		}
		read = results[winner]
	}
}

// testListSchedules: pages of schedules in id order (bytes), whatever
// their creation order, and tokens another listing issued are refused.
func testListSchedules(t *testing.T, open OpenFunc) {
	s := openStore(t, open)
	ctx := t.Context()
	ids := []string{"b", "a", "B", "a.1", "z-9", "a_", "0"}
	for _, id := range ids {
		createSchedule(t, s, newSchedule(id, time.Time{}))
	}
	slices.Sort(ids)
	all, pages := pageAll(t, "ListSchedules", 3, "", func(token string) ([]persistence.Schedule, string, error) {
		return s.ListSchedules(ctx, 3, token)
	})
	if got := scheduleIDs(all); !slices.Equal(got, ids) || pages != 3 {
		t.Fatalf("ListSchedules by 3 = %v in %d pages, want %v in 3", got, pages, ids)
	}
	if got, next, err := s.ListSchedules(ctx, 0, ""); err != nil || next != "" || !slices.Equal(scheduleIDs(got), ids) {
		t.Fatalf("ListSchedules with the default page size = %v, %q, %v", scheduleIDs(got), next, err)
	}
	// A page continues after the last id listed, even if it was deleted
	// meanwhile.
	first, token, err := s.ListSchedules(ctx, 2, "")
	if err != nil || token == "" {
		t.Fatalf("first page: %v, %q, %v", scheduleIDs(first), token, err)
	}
	if err := s.DeleteSchedule(ctx, first[1].ID); err != nil {
		t.Fatal(err)
	}
	rest, _ := pageAll(t, "ListSchedules after a delete", 2, token, func(token string) ([]persistence.Schedule, string, error) {
		return s.ListSchedules(ctx, 2, token)
	})
	if got := scheduleIDs(rest); !slices.Equal(got, ids[2:]) {
		t.Fatalf("pages after the deleted last id = %v, want %v", got, ids[2:])
	}

	write(t, s, persistence.Change{Handler: newHandler(newIDs(t, 1)[0], "wf")})
	write(t, s, persistence.Change{Handler: newHandler(newIDs(t, 1)[0], "wf")})
	_, handlerToken, err := s.ListHandlers(ctx, persistence.Query{PageSize: 1})
	if err != nil || handlerToken == "" {
		t.Fatalf("ListHandlers: %q, %v", handlerToken, err)
	}
	for _, token := range []string{handlerToken, "not a token", token[:len(token)-2]} {
		_, _, err := s.ListSchedules(ctx, 2, token)
		wantErr(t, fmt.Sprintf("ListSchedules with token %q", token), err, persistence.ErrInvalid)
	}
}
