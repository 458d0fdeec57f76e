package schedules

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/schedule"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// Create stores a new schedule owned by owner; its ticks count from now.
func (s *Scheduler) Create(ctx context.Context, pb *wfdv1.Schedule, owner string) (*wfdv1.Schedule, error) {
	in, err := fromAPI(pb)
	if err != nil {
		return nil, err
	}
	if err := s.runs.Known(ctx, in.stored.Workflow); err != nil {
		return nil, err
	}
	now := s.now()
	st, err := schedule.NewState(in.spec, now)
	if err != nil {
		return nil, invalid(err)
	}
	sch := schedule.Schedule{ID: in.stored.ID, Spec: in.spec, Policy: in.policy, Paused: in.stored.Paused, State: st}
	p := in.stored
	p.Owner, p.CreatedAt, p.UpdatedAt = owner, now, now
	if err := sch.Into(&p); err != nil {
		return nil, invalid(err)
	}
	rec, err := s.store.CreateSchedule(ctx, p)
	if errors.Is(err, persistence.ErrExists) {
		return nil, fmt.Errorf("%w: schedule %q exists", apierr.ErrAlreadyExists, p.ID)
	}
	if err != nil {
		return nil, err
	}
	s.Kick()
	return toAPI(rec, now)
}

// Get returns a schedule.
func (s *Scheduler) Get(ctx context.Context, id string) (*wfdv1.Schedule, error) {
	p, err := s.read(ctx, id)
	if err != nil {
		return nil, err
	}
	return toAPI(p, s.now())
}

func (s *Scheduler) read(ctx context.Context, id string) (persistence.Schedule, error) {
	if err := schedule.ValidateID(id); err != nil {
		return persistence.Schedule{}, invalid(err)
	}
	p, err := s.store.GetSchedule(ctx, id)
	if errors.Is(err, persistence.ErrNotFound) {
		return p, fmt.Errorf("schedule %q %w", id, apierr.ErrNotFound)
	}
	return p, err
}

// List returns a page of schedules by id.
func (s *Scheduler) List(ctx context.Context, pageSize int, token string) ([]*wfdv1.Schedule, string, error) {
	ps, next, err := s.store.ListSchedules(ctx, pageSize, token)
	if err != nil {
		return nil, "", err
	}
	now := s.now()
	out := make([]*wfdv1.Schedule, 0, len(ps))
	for _, p := range ps {
		v, err := toAPI(p, now)
		if err != nil {
			return nil, "", err
		}
		out = append(out, v)
	}
	return out, next, nil
}

// maxUpdateLaps bounds how often an update without expect_revision reads
// again a schedule whose tick was recorded meanwhile.
const maxUpdateLaps = 10

// Update replaces the settable fields of a schedule. With expect (not 0),
// a schedule at another revision is refused; without, one changed by a
// tick meanwhile is read again and the update made on it.
func (s *Scheduler) Update(ctx context.Context, pb *wfdv1.Schedule, expect uint64) (*wfdv1.Schedule, error) {
	in, err := fromAPI(pb)
	if err != nil {
		return nil, err
	}
	if err := s.runs.Known(ctx, in.stored.Workflow); err != nil {
		return nil, err
	}
	for range maxUpdateLaps {
		p, err := s.read(ctx, in.stored.ID)
		if err != nil {
			return nil, err
		}
		if expect != 0 && p.Revision != expect {
			return nil, fmt.Errorf("%w: schedule %q is at revision %d, not %d", apierr.ErrFailedPrecondition, p.ID, p.Revision, expect)
		}
		now := s.now()
		sch, err := schedule.Load(p)
		if err != nil {
			return nil, err
		}
		if in.spec != sch.Spec {
			if err := sch.SetSpec(in.spec, now); err != nil {
				return nil, invalid(err)
			}
		}
		if err := sch.SetPaused(in.stored.Paused, now); err != nil {
			return nil, invalid(err)
		}
		sch.Policy = in.policy
		p.Workflow, p.WorkflowVersion, p.Input, p.Note = in.stored.Workflow, in.stored.WorkflowVersion, in.stored.Input, in.stored.Note
		p.UpdatedAt = now
		if err := sch.Into(&p); err != nil {
			return nil, invalid(err)
		}
		rec, err := s.store.UpdateSchedule(ctx, p, p.Revision)
		if errors.Is(err, persistence.ErrConflict) {
			if expect != 0 {
				return nil, fmt.Errorf("%w: schedule %q changed meanwhile", apierr.ErrFailedPrecondition, p.ID)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		s.Kick()
		return toAPI(rec, now)
	}
	return nil, fmt.Errorf("%w: schedule %q keeps changing; retry", apierr.ErrUnavailable, in.stored.ID)
}

// Delete removes a schedule; the handlers it started go on.
func (s *Scheduler) Delete(ctx context.Context, id string) error {
	if err := schedule.ValidateID(id); err != nil {
		return invalid(err)
	}
	err := s.store.DeleteSchedule(ctx, id)
	if errors.Is(err, persistence.ErrNotFound) {
		return fmt.Errorf("schedule %q %w", id, apierr.ErrNotFound)
	}
	return err
}

// Trigger starts a run at at (zero: now), or with from and to set,
// backfills the ticks of [from, to]. It returns the schedule as
// recorded and the handlers started.
func (s *Scheduler) Trigger(ctx context.Context, id string, at, from, to time.Time) (*wfdv1.Schedule, []string, error) {
	var decide planner
	switch {
	case from.IsZero() != to.IsZero():
		return nil, nil, fmt.Errorf("%w: a backfill needs backfill_from and backfill_to", apierr.ErrInvalid)
	case !from.IsZero() && !at.IsZero():
		return nil, nil, fmt.Errorf("%w: at and a backfill exclude each other", apierr.ErrInvalid)
	case !from.IsZero():
		decide = func(sch schedule.Schedule, now time.Time) (schedule.Decision, error) {
			return schedule.Backfill(sch, from, to, now)
		}
	default:
		decide = func(sch schedule.Schedule, now time.Time) (schedule.Decision, error) {
			if at.IsZero() {
				at = now
			}
			return schedule.Trigger(sch, at)
		}
	}
	for range maxUpdateLaps {
		p, err := s.read(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if !at.IsZero() {
			// A retried trigger (same instant) that the schedule recorded
			// already: nothing to do again. One whose run was started but
			// not recorded (a record that lost to a tick's) is decided
			// again below: the start finds its handler, the record sticks.
			run := schedule.TriggerHandlerID(id, at)
			if recorded, err := recordedRun(p, run); err != nil || recorded {
				if err != nil {
					return nil, nil, err
				}
				v, err := toAPI(p, s.now())
				return v, []string{run}, err
			}
		}
		rec, started, err := s.fire(ctx, p, func(sch schedule.Schedule, now time.Time) (schedule.Decision, error) {
			d, err := decide(sch, now)
			if err != nil {
				return d, invalid(err)
			}
			return d, nil
		})
		if errors.Is(err, persistence.ErrConflict) {
			continue // a tick was recorded meanwhile: decide on the new state
		}
		if err != nil {
			return nil, nil, err
		}
		v, err := toAPI(rec, s.now())
		return v, started, err
	}
	return nil, nil, fmt.Errorf("%w: schedule %q keeps changing; retry", apierr.ErrUnavailable, id)
}

// recordedRun reports whether the stored schedule p records an outcome of
// the run handlerID.
func recordedRun(p persistence.Schedule, handlerID string) (bool, error) {
	st, err := schedule.DecodeState(p.State)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(st.Recent, func(o schedule.Outcome) bool { return o.HandlerID == handlerID }), nil
}
