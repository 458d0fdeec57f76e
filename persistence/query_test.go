package persistence_test

import (
	"errors"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

func TestQueryLimit(t *testing.T) {
	for _, tt := range []struct{ size, want int }{
		{0, persistence.DefaultPageSize},
		{1, 1},
		{persistence.MaxPageSize, persistence.MaxPageSize},
		{persistence.MaxPageSize + 1, persistence.MaxPageSize},
	} {
		q := persistence.Query{PageSize: tt.size}
		if got := q.Limit(); got != tt.want {
			t.Errorf("Query{PageSize: %d}.Limit() = %d, want %d", tt.size, got, tt.want)
		}
	}
}

func TestQueryIdleCutoff(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		q          persistence.Query
		wantCutoff time.Time
		wantIdle   bool
	}{
		{"no idle filter", persistence.Query{Now: now}, time.Time{}, false},
		{"idle only", persistence.Query{IdleOnly: true, Now: now}, time.Time{}, true},
		{"idle for implies idle", persistence.Query{IdleFor: time.Hour, Now: now}, now.Add(-time.Hour), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cutoff, idle := tt.q.IdleCutoff()
			if !cutoff.Equal(tt.wantCutoff) || idle != tt.wantIdle {
				t.Fatalf("IdleCutoff() = %v, %v; want %v, %v", cutoff, idle, tt.wantCutoff, tt.wantIdle)
			}
		})
	}
	// Without Now, the cutoff is relative to the current time.
	q := persistence.Query{IdleFor: time.Hour}
	if cutoff, _ := q.IdleCutoff(); time.Since(cutoff) < time.Hour || time.Since(cutoff) > time.Hour+time.Minute {
		t.Fatalf("IdleCutoff() without Now = %v", cutoff)
	}
}

func TestChangeValidate(t *testing.T) {
	ok := persistence.Change{Handler: persistence.Handler{
		ID: "h", Workflow: "w", Status: persistence.StatusRunning, Residency: persistence.ResidencyActive,
	}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid change: %v", err)
	}
	del := persistence.Change{Handler: persistence.Handler{ID: "h"}, Delete: true}
	if err := del.Validate(); err != nil {
		t.Fatalf("delete needs only the id: %v", err)
	}
	bad := ok
	bad.Handler.Residency = 0
	if err := bad.Validate(); !errors.Is(err, persistence.ErrInvalid) {
		t.Fatalf("Validate = %v, want ErrInvalid", err)
	}
}

func TestTaskQueryValidate(t *testing.T) {
	for _, q := range []persistence.TaskQuery{
		{Statuses: []persistence.TaskStatus{persistence.TaskCancelled + 1}},
		{Assignee: "a\x00"},
		{PageSize: -1},
	} {
		if err := q.Validate(); !errors.Is(err, persistence.ErrInvalid) {
			t.Errorf("%+v.Validate() = %v, want ErrInvalid", q, err)
		}
	}
	q := persistence.TaskQuery{PageSize: persistence.MaxPageSize + 1}
	if err := q.Validate(); err != nil || q.Limit() != persistence.MaxPageSize {
		t.Errorf("TaskQuery{PageSize: %d}: Validate %v, Limit %d", q.PageSize, err, q.Limit())
	}
}
