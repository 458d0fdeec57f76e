package postgres_test

import (
	"errors"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
	"github.com/wfd-dev/wfd/persistence/storetest"
)

// TestCorruptSchedule: a schedule value that cannot be decoded fails
// only that schedule, and a delete removes its row.
func TestCorruptSchedule(t *testing.T) {
	url := pgtest.NewDatabase(t)
	s := openShared(t, url, postgres.Options{})
	storetest.CorruptSchedule(t, s, func(id string) persistence.Store {
		if _, err := connect(t, url).Exec(t.Context(), `UPDATE wfd_schedules SET sched = '{"v":1,"id":' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestSchedulesMigration: 00007 and back, and up again, with schedules.
func TestSchedulesMigration(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	s := openShared(t, url, postgres.Options{})
	sc := persistence.Schedule{ID: "s", Interval: 60e9, Workflow: "w"}
	if _, err := s.CreateSchedule(ctx, sc); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if err := postgres.MigrateDownTo(ctx, url, 6); err != nil {
		t.Fatalf("migrating down to schema 6: %v", err)
	}
	s = openShared(t, url, postgres.Options{})
	if _, err := s.GetSchedule(ctx, "s"); !errors.Is(err, persistence.ErrNotFound) {
		t.Fatalf("GetSchedule after the way down and up = %v, want ErrNotFound", err)
	}
	if got, err := s.CreateSchedule(ctx, sc); err != nil || got.Revision == 0 {
		t.Fatalf("CreateSchedule after the way down and up = %+v, %v", got, err)
	}
}
