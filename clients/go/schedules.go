package client

import (
	"context"
	"iter"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// CreateSchedule stores a schedule that starts s.Action's workflow on
// s.Spec's cron expression or interval, and returns it with its next
// ticks (GetInfo().GetNextTicks()). A malformed cron expression is
// codes.InvalidArgument naming the field; an unknown workflow
// codes.NotFound; an id in use codes.AlreadyExists.
func (c *Client) CreateSchedule(ctx context.Context, s *wfdv1.Schedule) (*wfdv1.Schedule, error) {
	res, err := c.svc.CreateSchedule(ctx, &wfdv1.CreateScheduleRequest{Schedule: s})
	if err != nil {
		return nil, err
	}
	return res.GetSchedule(), nil
}

// GetSchedule returns a schedule with what it did (recent outcomes,
// counters, the handlers it started that may still run) and its next
// ticks.
func (c *Client) GetSchedule(ctx context.Context, id string) (*wfdv1.Schedule, error) {
	res, err := c.svc.GetSchedule(ctx, &wfdv1.GetScheduleRequest{ScheduleId: id})
	if err != nil {
		return nil, err
	}
	return res.GetSchedule(), nil
}

// ListSchedules returns a page of schedules by id (pageSize 0: the
// server's default, 100) and the next page's token ("" after the last).
func (c *Client) ListSchedules(ctx context.Context, size int, token string) ([]*wfdv1.Schedule, string, error) {
	n, err := pageSize(size)
	if err != nil {
		return nil, "", err
	}
	res, err := c.svc.ListSchedules(ctx, &wfdv1.ListSchedulesRequest{PageSize: n, PageToken: token})
	if err != nil {
		return nil, "", err
	}
	return res.GetSchedules(), res.GetNextPageToken(), nil
}

// AllSchedules yields every schedule, page after page; it stops after the
// first error, which it yields.
func (c *Client) AllSchedules(ctx context.Context) iter.Seq2[*wfdv1.Schedule, error] {
	return allPages("", func(token string) ([]*wfdv1.Schedule, string, error) { return c.ListSchedules(ctx, 0, token) })
}

// UpdateSchedule replaces a schedule's spec, action, policy, paused flag
// and note with s's. With expectRevision (not 0) it is refused
// (codes.FailedPrecondition) if the schedule changed since that
// revision (s.GetRevision() of a schedule read earlier).
func (c *Client) UpdateSchedule(ctx context.Context, s *wfdv1.Schedule, expectRevision uint64) (*wfdv1.Schedule, error) {
	res, err := c.svc.UpdateSchedule(ctx, &wfdv1.UpdateScheduleRequest{Schedule: s, ExpectRevision: expectRevision})
	if err != nil {
		return nil, err
	}
	return res.GetSchedule(), nil
}

// PauseSchedule pauses a schedule (with note, if not empty, as its note):
// it starts nothing until resumed.
func (c *Client) PauseSchedule(ctx context.Context, id, note string) (*wfdv1.Schedule, error) {
	return c.setPaused(ctx, id, true, note)
}

// ResumeSchedule resumes a paused schedule; the ticks of the pause are not
// caught up.
func (c *Client) ResumeSchedule(ctx context.Context, id string) (*wfdv1.Schedule, error) {
	return c.setPaused(ctx, id, false, "")
}

// maxPauseLaps bounds how often setPaused reads a schedule again that
// changed under it (its ticks change it too).
const maxPauseLaps = 5

func (c *Client) setPaused(ctx context.Context, id string, paused bool, note string) (*wfdv1.Schedule, error) {
	for i := 0; ; i++ {
		s, err := c.GetSchedule(ctx, id)
		if err != nil {
			return nil, err
		}
		s.Paused = paused
		if note != "" {
			s.Note = note
		}
		out, err := c.UpdateSchedule(ctx, s, s.GetRevision())
		if status.Code(err) != codes.FailedPrecondition || i+1 == maxPauseLaps {
			return out, err
		}
	}
}

// DeleteSchedule removes a schedule; the handlers it started go on.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	_, err := c.svc.DeleteSchedule(ctx, &wfdv1.DeleteScheduleRequest{ScheduleId: id})
	return err
}

// TriggerSchedule starts a run of the schedule now, under its overlap
// policy, and returns the schedule and the handlers started. The instant
// is the client's, sent with the call, so the client's retries start one
// run.
func (c *Client) TriggerSchedule(ctx context.Context, id string) (*wfdv1.TriggerScheduleResponse, error) {
	return c.svc.TriggerSchedule(ctx, &wfdv1.TriggerScheduleRequest{ScheduleId: id, At: timestamppb.Now()})
}

// BackfillSchedule starts the schedule's ticks in [from, to] (at most
// 1,000, none in the future) under its overlap policy; a tick that ran
// already is not run again.
func (c *Client) BackfillSchedule(ctx context.Context, id string, from, to time.Time) (*wfdv1.TriggerScheduleResponse, error) {
	return c.svc.TriggerSchedule(ctx, &wfdv1.TriggerScheduleRequest{ScheduleId: id,
		BackfillFrom: timestamppb.New(from), BackfillTo: timestamppb.New(to)})
}
