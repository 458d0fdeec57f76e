package faultstore

import (
	"context"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// The methods of persistence.Schedules, each its Funcs field or the
// wrapped store's.

// CreateSchedule implements persistence.Store.
func (s *Store) CreateSchedule(ctx context.Context, sc persistence.Schedule) (persistence.Schedule, error) {
	s.Calls.CreateSchedule.Add(1)
	if f := s.current().CreateScheduleFunc; f != nil {
		return f(ctx, sc)
	}
	return s.inner.CreateSchedule(ctx, sc)
}

// GetSchedule implements persistence.Store.
func (s *Store) GetSchedule(ctx context.Context, id string) (persistence.Schedule, error) {
	s.Calls.GetSchedule.Add(1)
	if f := s.current().GetScheduleFunc; f != nil {
		return f(ctx, id)
	}
	return s.inner.GetSchedule(ctx, id)
}

// ListSchedules implements persistence.Store.
func (s *Store) ListSchedules(ctx context.Context, pageSize int, pageToken string) ([]persistence.Schedule, string, error) {
	s.Calls.ListSchedules.Add(1)
	if f := s.current().ListSchedulesFunc; f != nil {
		return f(ctx, pageSize, pageToken)
	}
	return s.inner.ListSchedules(ctx, pageSize, pageToken)
}

// UpdateSchedule implements persistence.Store.
func (s *Store) UpdateSchedule(ctx context.Context, sc persistence.Schedule, expectRevision uint64) (persistence.Schedule, error) {
	s.Calls.UpdateSchedule.Add(1)
	if f := s.current().UpdateScheduleFunc; f != nil {
		return f(ctx, sc, expectRevision)
	}
	return s.inner.UpdateSchedule(ctx, sc, expectRevision)
}

// DeleteSchedule implements persistence.Store.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	s.Calls.DeleteSchedule.Add(1)
	if f := s.current().DeleteScheduleFunc; f != nil {
		return f(ctx, id)
	}
	return s.inner.DeleteSchedule(ctx, id)
}

// DueSchedules implements persistence.Store.
func (s *Store) DueSchedules(ctx context.Context, before time.Time, limit int) ([]persistence.Schedule, error) {
	s.Calls.DueSchedules.Add(1)
	if f := s.current().DueSchedulesFunc; f != nil {
		return f(ctx, before, limit)
	}
	return s.inner.DueSchedules(ctx, before, limit)
}
