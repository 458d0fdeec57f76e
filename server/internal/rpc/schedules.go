package rpc

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// validateSchedule checks what the edge checks of every request: the
// action's names and input payload (schedules.fromAPI checks the rest).
func (v *Service) validateSchedule(s *wfdv1.Schedule) error {
	if s == nil {
		return fmt.Errorf("%w: schedule is required", apierr.ErrInvalid)
	}
	a := s.GetAction()
	if err := checkName("action.workflow", a.GetWorkflow()); err != nil {
		return err
	}
	if a.GetVersion() != "" {
		if err := checkName("action.version", a.GetVersion()); err != nil {
			return err
		}
	}
	return checkPayload(v.payloadLimits(), "action.input", a.GetInput())
}

func (v *Service) CreateSchedule(ctx context.Context, req *wfdv1.CreateScheduleRequest) (*wfdv1.CreateScheduleResponse, error) {
	if err := v.validateSchedule(req.GetSchedule()); err != nil {
		return nil, err
	}
	owner := ""
	if who, ok := auth.FromContext(ctx); ok {
		owner = who.Subject
	}
	s, err := v.schedules.Create(ctx, req.GetSchedule(), owner)
	if err != nil {
		return nil, err
	}
	return &wfdv1.CreateScheduleResponse{Schedule: s}, nil
}

func (v *Service) GetSchedule(ctx context.Context, req *wfdv1.GetScheduleRequest) (*wfdv1.GetScheduleResponse, error) {
	s, err := v.schedules.Get(ctx, req.GetScheduleId())
	if err != nil {
		return nil, err
	}
	return &wfdv1.GetScheduleResponse{Schedule: s}, nil
}

func (v *Service) ListSchedules(ctx context.Context, req *wfdv1.ListSchedulesRequest) (*wfdv1.ListSchedulesResponse, error) {
	if req.GetPageSize() < 0 || req.GetPageSize() > maxPageSize {
		return nil, fmt.Errorf("%w: page_size %d is outside 0..%d", apierr.ErrInvalid, req.GetPageSize(), maxPageSize)
	}
	ss, next, err := v.schedules.List(ctx, int(req.GetPageSize()), req.GetPageToken())
	if err != nil {
		return nil, err
	}
	return &wfdv1.ListSchedulesResponse{Schedules: ss, NextPageToken: next}, nil
}

func (v *Service) UpdateSchedule(ctx context.Context, req *wfdv1.UpdateScheduleRequest) (*wfdv1.UpdateScheduleResponse, error) {
	if err := v.validateSchedule(req.GetSchedule()); err != nil {
		return nil, err
	}
	s, err := v.schedules.Update(ctx, req.GetSchedule(), req.GetExpectRevision())
	if err != nil {
		return nil, err
	}
	return &wfdv1.UpdateScheduleResponse{Schedule: s}, nil
}

func (v *Service) DeleteSchedule(ctx context.Context, req *wfdv1.DeleteScheduleRequest) (*wfdv1.DeleteScheduleResponse, error) {
	if err := v.schedules.Delete(ctx, req.GetScheduleId()); err != nil {
		return nil, err
	}
	return &wfdv1.DeleteScheduleResponse{}, nil
}

func (v *Service) TriggerSchedule(ctx context.Context, req *wfdv1.TriggerScheduleRequest) (*wfdv1.TriggerScheduleResponse, error) {
	var at, from, to time.Time
	for _, f := range []struct {
		name string
		ts   *timestamppb.Timestamp
		to   *time.Time
	}{{"at", req.GetAt(), &at}, {"backfill_from", req.GetBackfillFrom(), &from}, {"backfill_to", req.GetBackfillTo(), &to}} {
		if f.ts == nil {
			continue
		}
		if err := f.ts.CheckValid(); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", apierr.ErrInvalid, f.name, err)
		}
		*f.to = f.ts.AsTime()
	}
	s, started, err := v.schedules.Trigger(ctx, req.GetScheduleId(), at, from, to)
	if err != nil {
		return nil, err
	}
	return &wfdv1.TriggerScheduleResponse{Schedule: s, Started: started}, nil
}
