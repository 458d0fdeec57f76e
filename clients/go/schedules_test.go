package client_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
)

// TestSchedules: create, read, pause and resume, trigger, backfill and
// delete a schedule through the client; bad input keeps its codes.
func TestSchedules(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	s := &wfdv1.Schedule{ScheduleId: "hourly", Spec: &wfdv1.ScheduleSpec{Interval: durationpb.New(time.Hour)},
		Action: &wfdv1.ScheduleAction{Workflow: "echo"}, Policy: &wfdv1.SchedulePolicy{Overlap: wfdv1.OverlapPolicy_OVERLAP_POLICY_ALLOW}}
	created, err := c.CreateSchedule(ctxT(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(created.GetInfo().GetNextTicks()) != 5 {
		t.Fatalf("next ticks %v", created.GetInfo().GetNextTicks())
	}
	paused, err := c.PauseSchedule(ctxT(t), "hourly", "maintenance")
	if err != nil || !paused.GetPaused() || paused.GetNote() != "maintenance" || len(paused.GetInfo().GetNextTicks()) != 0 {
		t.Fatalf("paused: %v, %v", paused, err)
	}
	if r, err := c.ResumeSchedule(ctxT(t), "hourly"); err != nil || r.GetPaused() {
		t.Fatalf("resumed: %v, %v", r, err)
	}
	tr, err := c.TriggerSchedule(ctxT(t), "hourly")
	if err != nil || len(tr.GetStarted()) != 1 || !strings.HasPrefix(tr.GetStarted()[0], "sched:hourly:trigger:") {
		t.Fatalf("trigger: %v, %v", tr, err)
	}
	if h, err := c.Get(ctxT(t), tr.GetStarted()[0]); err != nil || h.GetScheduleId() != "hourly" {
		t.Fatalf("the triggered handler: %v, %v", h, err)
	}
	now := time.Now()
	bf, err := c.BackfillSchedule(ctxT(t), "hourly", now.Add(-3*time.Hour), now.Add(-time.Hour))
	if err != nil || len(bf.GetStarted()) < 2 {
		t.Fatalf("backfill: %v, %v", bf, err)
	}
	var ids []string
	for s, err := range c.AllSchedules(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.GetScheduleId())
	}
	if len(ids) != 1 || ids[0] != "hourly" {
		t.Fatalf("AllSchedules: %v", ids)
	}
	if _, err := c.UpdateSchedule(ctxT(t), s, 999); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("update at a stale revision: %v", err)
	}
	bad := &wfdv1.Schedule{ScheduleId: "bad", Spec: &wfdv1.ScheduleSpec{Cron: "0 25 * * *"}, Action: &wfdv1.ScheduleAction{Workflow: "echo"}}
	if _, err := c.CreateSchedule(ctxT(t), bad); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "cron field 2 (hour)") {
		t.Fatalf("bad cron: %v", err)
	}
	if err := c.DeleteSchedule(ctxT(t), "hourly"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSchedule(ctxT(t), "hourly"); status.Code(err) != codes.NotFound {
		t.Fatalf("after delete: %v", err)
	}
}
