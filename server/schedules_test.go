package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
)

// fakeClock is a server's clock that the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

func everyMinute(id, workflow string, overlap wfdv1.OverlapPolicy) *wfdv1.Schedule {
	return &wfdv1.Schedule{ScheduleId: id, Spec: &wfdv1.ScheduleSpec{Interval: durationpb.New(time.Minute)},
		Action: &wfdv1.ScheduleAction{Workflow: workflow}, Policy: &wfdv1.SchedulePolicy{Overlap: overlap}}
}

// scheduleInfo waits until the schedule's info satisfies ok.
func scheduleInfo(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, what string, ok func(*wfdv1.Schedule) bool) *wfdv1.Schedule {
	t.Helper()
	var s *wfdv1.Schedule
	testwait.For(t, what, func() bool {
		res, err := c.GetSchedule(ctxT(t), &wfdv1.GetScheduleRequest{ScheduleId: id})
		if err != nil {
			t.Fatal(err)
		}
		s = res.Schedule
		return ok(s)
	})
	return s
}

func tickID(id string, t time.Time) string {
	return "sched:" + id + ":" + t.UTC().Format("20060102T150405Z")
}

// TestSchedules: ticks start one handler each, named after the schedule
// and tick; skip holds a tick back while the previous run runs; paused
// schedules start nothing; trigger and backfill start runs on demand; a
// tick whose workflow version is gone is recorded as failed and the
// schedule goes on; bad input is refused with the field named.
func TestSchedules(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 500e6, time.UTC)
	clock := &fakeClock{t: t0}
	ts := startServer(t, serverConfig{workflows: testWorkflows(), now: clock.now,
		options: func(o *server.Options) { o.SchedulePoll = 10 * time.Millisecond }})
	c := ts.client()
	minute := func(n int) time.Time { return t0.Truncate(time.Minute).Add(time.Duration(n) * time.Minute) }

	res, err := c.CreateSchedule(ctxT(t), &wfdv1.CreateScheduleRequest{Schedule: everyMinute("echo", "echo", wfdv1.OverlapPolicy_OVERLAP_POLICY_ALLOW)})
	if err != nil {
		t.Fatal(err)
	}
	if next := res.Schedule.GetInfo().GetNextTicks(); len(next) != 5 || !next[0].AsTime().Equal(minute(1)) {
		t.Fatalf("next ticks %v, want 5 from %v", next, minute(1))
	}
	if _, err := c.CreateSchedule(ctxT(t), &wfdv1.CreateScheduleRequest{Schedule: everyMinute("appr", "approval", 0)}); err != nil {
		t.Fatal(err)
	}
	gone := everyMinute("gone", "echo", 0)
	gone.Action.Version = "v9"
	if _, err := c.CreateSchedule(ctxT(t), &wfdv1.CreateScheduleRequest{Schedule: gone}); err != nil {
		t.Fatal(err)
	}

	// 12:01: each schedule fires once.
	clock.set(minute(1).Add(time.Second))
	scheduleInfo(t, c, "echo", "echo's first tick", func(s *wfdv1.Schedule) bool { return s.Info.Started == 1 })
	h, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: tickID("echo", minute(1))})
	if err != nil {
		t.Fatal(err)
	}
	if h.Handler.ScheduleId != "echo" || !h.Handler.ScheduleTick.AsTime().Equal(minute(1)) {
		t.Fatalf("the tick's handler says schedule %q tick %v", h.Handler.ScheduleId, h.Handler.ScheduleTick.AsTime())
	}
	scheduleInfo(t, c, "appr", "appr's first tick", func(s *wfdv1.Schedule) bool { return s.Info.Started == 1 && len(s.Info.Running) == 1 })
	g := scheduleInfo(t, c, "gone", "gone's failed tick", func(s *wfdv1.Schedule) bool { return s.Info.Failed == 1 })
	if r := g.Info.Recent[0]; r.Kind != wfdv1.ScheduleOutcomeKind_SCHEDULE_OUTCOME_KIND_FAILED || !strings.Contains(r.Reason, "v9") {
		t.Fatalf("gone's outcome %v", r)
	}

	// 12:02: appr's approval still waits, so its tick is skipped; echo,
	// paused now, starts nothing; gone fails again and goes on.
	paused := everyMinute("echo", "echo", wfdv1.OverlapPolicy_OVERLAP_POLICY_ALLOW)
	paused.Paused = true
	if _, err := c.UpdateSchedule(ctxT(t), &wfdv1.UpdateScheduleRequest{Schedule: paused}); err != nil {
		t.Fatal(err)
	}
	clock.set(minute(2).Add(time.Second))
	scheduleInfo(t, c, "appr", "appr's tick skipped", func(s *wfdv1.Schedule) bool { return s.Info.Skipped == 1 })
	scheduleInfo(t, c, "gone", "gone's second failed tick", func(s *wfdv1.Schedule) bool { return s.Info.Failed == 2 })
	for _, id := range []string{tickID("appr", minute(2)), tickID("echo", minute(2))} {
		_, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		wantCode(t, err, connect.CodeNotFound, "")
	}
	if e, _ := c.GetSchedule(ctxT(t), &wfdv1.GetScheduleRequest{ScheduleId: "echo"}); len(e.Schedule.Info.NextTicks) != 0 || e.Schedule.Info.Started != 1 {
		t.Fatalf("paused echo: %v", e.Schedule.Info)
	}

	// Trigger (retried with the same instant: one run) and backfill.
	at := timestamppb.New(minute(2).Add(30 * time.Second))
	for range 2 {
		tr, err := c.TriggerSchedule(ctxT(t), &wfdv1.TriggerScheduleRequest{ScheduleId: "echo", At: at})
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Started) != 1 || !strings.HasPrefix(tr.Started[0], "sched:echo:trigger:") {
			t.Fatalf("trigger started %v", tr.Started)
		}
	}
	bf, err := c.TriggerSchedule(ctxT(t), &wfdv1.TriggerScheduleRequest{ScheduleId: "echo",
		BackfillFrom: timestamppb.New(minute(-10)), BackfillTo: timestamppb.New(minute(-8))})
	if err != nil {
		t.Fatal(err)
	}
	if len(bf.Started) != 3 || bf.Started[0] != tickID("echo", minute(-10)) {
		t.Fatalf("backfill started %v", bf.Started)
	}
	if s := bf.Schedule.Info; s.Started != 5 {
		t.Fatalf("echo started %d runs, want 5 (a tick, a trigger, 3 backfilled)", s.Started)
	}
	for _, id := range bf.Started {
		if _, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id}); err != nil {
			t.Fatalf("backfilled %s: %v", id, err)
		}
	}

	list, err := c.ListSchedules(ctxT(t), &wfdv1.ListSchedulesRequest{PageSize: 2})
	if err != nil || len(list.Schedules) != 2 || list.Schedules[0].ScheduleId != "appr" || list.NextPageToken == "" {
		t.Fatalf("ListSchedules: %v, %v", list, err)
	}
	fams := scrape(t, ts.addr)
	// echo: 1 tick, 1 trigger, 3 backfilled; appr: 1 tick; gone: 2 ticks
	// decided and failed.
	for kind, want := range map[string]float64{"started": 8, "failed": 2, "skipped": 1} {
		if got := value(fams, "wfd_schedule_outcomes_total", "kind="+kind); got != want {
			t.Errorf("wfd_schedule_outcomes_total{kind=%q} = %v, want %v", kind, got, want)
		}
	}
	if _, err := c.DeleteSchedule(ctxT(t), &wfdv1.DeleteScheduleRequest{ScheduleId: "gone"}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetSchedule(ctxT(t), &wfdv1.GetScheduleRequest{ScheduleId: "gone"})
	wantCode(t, err, connect.CodeNotFound, "gone")
}

// TestSchedulesRefuse: bad schedules are refused with the right code and
// the field named, and nothing is stored.
func TestSchedulesRefuse(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	if _, err := c.CreateSchedule(ctxT(t), &wfdv1.CreateScheduleRequest{Schedule: everyMinute("dup", "echo", 0)}); err != nil {
		t.Fatal(err)
	}
	cron := func(expr, tz string) *wfdv1.Schedule {
		s := everyMinute("c", "echo", 0)
		s.Spec = &wfdv1.ScheduleSpec{Cron: expr, TimeZone: tz}
		return s
	}
	for _, tc := range []struct {
		name string
		s    *wfdv1.Schedule
		code connect.Code
		msg  string
	}{
		{"hour out of range", cron("0 25 * * *", ""), connect.CodeInvalidArgument, "cron field 2 (hour)"},
		{"too few fields", cron("0 12 * *", ""), connect.CodeInvalidArgument, "cron"},
		{"unknown zone", cron("0 12 * * *", "Mars/Olympus"), connect.CodeInvalidArgument, "time zone"},
		{"no spec", &wfdv1.Schedule{ScheduleId: "c", Action: &wfdv1.ScheduleAction{Workflow: "echo"}}, connect.CodeInvalidArgument, "spec"},
		{"bad id", everyMinute("a:b", "echo", 0), connect.CodeInvalidArgument, "schedule id"},
		{"unknown workflow", everyMinute("c", "nope", 0), connect.CodeNotFound, "nope"},
		{"no workflow", everyMinute("c", "", 0), connect.CodeInvalidArgument, "action.workflow"},
		{"taken id", everyMinute("dup", "echo", 0), connect.CodeAlreadyExists, "dup"},
		{"no schedule", nil, connect.CodeInvalidArgument, "schedule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.CreateSchedule(ctxT(t), &wfdv1.CreateScheduleRequest{Schedule: tc.s})
			wantCode(t, err, tc.code, tc.msg)
		})
	}
	list, err := c.ListSchedules(ctxT(t), &wfdv1.ListSchedulesRequest{})
	if err != nil || len(list.Schedules) != 1 {
		t.Fatalf("after the refusals: %v, %v", list, err)
	}
	_, err = c.UpdateSchedule(ctxT(t), &wfdv1.UpdateScheduleRequest{Schedule: everyMinute("dup", "echo", 0), ExpectRevision: 999})
	wantCode(t, err, connect.CodeFailedPrecondition, "revision")
	_, err = c.TriggerSchedule(ctxT(t), &wfdv1.TriggerScheduleRequest{ScheduleId: "dup", BackfillFrom: timestamppb.Now()})
	wantCode(t, err, connect.CodeInvalidArgument, "backfill")
	_, err = c.TriggerSchedule(ctxT(t), &wfdv1.TriggerScheduleRequest{ScheduleId: "dup",
		BackfillFrom: timestamppb.New(time.Now().Add(-1000 * time.Hour)), BackfillTo: timestamppb.Now()})
	wantCode(t, err, connect.CodeInvalidArgument, "1000")
}

// TestScheduleRecordFails: the scheduler starts a tick's run, then
// cannot record it (the store refuses the write): the run stays, and the
// next pass plans the same tick again, finds its handler and records it
// once. Reads of the due schedules that fail are tried again.
func TestScheduleRecordFails(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 500e6, time.UTC)
	clock := &fakeClock{t: t0}
	f := startFaulty(t, server.Options{Workflows: testWorkflows(), Now: clock.now, SchedulePoll: 10 * time.Millisecond})
	var failedWrites, failedReads atomic.Int32
	f.fs.Update(func(fn *faultstore.Funcs) {
		fn.UpdateScheduleFunc = func(ctx context.Context, s persistence.Schedule, rev uint64) (persistence.Schedule, error) {
			if failedWrites.Add(1) <= 2 {
				return persistence.Schedule{}, fmt.Errorf("%w: disk unplugged", persistence.ErrUnavailable)
			}
			return f.fs.Inner().UpdateSchedule(ctx, s, rev)
		}
		fn.DueSchedulesFunc = func(ctx context.Context, before time.Time, limit int) ([]persistence.Schedule, error) {
			if failedReads.Add(1) <= 2 {
				return nil, fmt.Errorf("%w: disk unplugged", persistence.ErrUnavailable)
			}
			return f.fs.Inner().DueSchedules(ctx, before, limit)
		}
	})
	c := f.client
	if _, err := c.CreateSchedule(ctxT(t), &wfdv1.CreateScheduleRequest{Schedule: everyMinute("echo", "echo", 0)}); err != nil {
		t.Fatal(err)
	}
	clock.set(t0.Add(time.Minute))
	s := scheduleInfo(t, c, "echo", "the tick recorded", func(s *wfdv1.Schedule) bool { return s.Info.Started > 0 })
	if s.Info.Started != 1 || len(s.Info.Recent) != 1 || failedWrites.Load() < 3 {
		t.Fatalf("after two failed records: %v (writes tried %d)", s.Info, failedWrites.Load())
	}
	if _, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: s.Info.Recent[0].HandlerId}); err != nil {
		t.Fatal(err)
	}
}

// TestScheduleTriggerRecordConflict: a trigger whose run started but whose
// record lost to another writer's (a tick recorded meanwhile) decides
// again on the new revision and records its run; it does not take the
// run's handler for the record.
func TestScheduleTriggerRecordConflict(t *testing.T) {
	f := startFaulty(t, server.Options{Workflows: testWorkflows(), SchedulePoll: time.Hour})
	var conflicts atomic.Int32
	f.fs.Update(func(fn *faultstore.Funcs) {
		fn.UpdateScheduleFunc = func(ctx context.Context, s persistence.Schedule, rev uint64) (persistence.Schedule, error) {
			if conflicts.Add(1) == 1 {
				return persistence.Schedule{}, fmt.Errorf("%w: revision %d is stale", persistence.ErrConflict, rev)
			}
			return f.fs.Inner().UpdateSchedule(ctx, s, rev)
		}
	})
	c := f.client
	if _, err := c.CreateSchedule(ctxT(t), &wfdv1.CreateScheduleRequest{Schedule: everyMinute("echo", "echo", 0)}); err != nil {
		t.Fatal(err)
	}
	at := timestamppb.New(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	for range 2 { // the second is a client's retry: recorded once
		res, err := c.TriggerSchedule(ctxT(t), &wfdv1.TriggerScheduleRequest{ScheduleId: "echo", At: at})
		if err != nil {
			t.Fatal(err)
		}
		if res.Schedule.Info.Started != 1 || len(res.Schedule.Info.Recent) != 1 || len(res.Started) != 1 {
			t.Fatalf("after a lost record: %v, started %v", res.Schedule.Info, res.Started)
		}
	}
}
