package replicatest_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/server"
)

// TestReplicaScheduleTicksOnce: a schedule every second, fired by three
// replicas polling the same database, starts one handler per tick, each
// recorded once: every replica plans every tick, the handler ids they
// derive are the same, and one record per pass sticks.
func TestReplicaScheduleTicksOnce(t *testing.T) {
	url := pgURL(t)
	var rs []*replica
	for _, id := range []string{"a", "b", "c"} {
		rs = append(rs, startReplicaWith(t, url, id, 30*time.Second, false, func(o *server.Options) { o.SchedulePoll = 20 * time.Millisecond }))
	}
	ctx := context.Background()
	_, err := rs[0].c.CreateSchedule(ctx, &wfdv1.CreateScheduleRequest{Schedule: &wfdv1.Schedule{
		ScheduleId: "every-second", Spec: &wfdv1.ScheduleSpec{Interval: durationpb.New(time.Second)},
		Action: &wfdv1.ScheduleAction{Workflow: "sequence", Input: sequenceOf(1)},
		Policy: &wfdv1.SchedulePolicy{Overlap: wfdv1.OverlapPolicy_OVERLAP_POLICY_ALLOW},
	}})
	if err != nil {
		t.Fatal(err)
	}
	const ticks = 5
	var s *wfdv1.Schedule
	testwait.For(t, "five ticks", func() bool {
		res, err := rs[1].c.GetSchedule(ctx, &wfdv1.GetScheduleRequest{ScheduleId: "every-second"})
		if err != nil {
			t.Fatal(err)
		}
		s = res.Schedule
		return s.Info.Started >= ticks
	})
	if _, err := rs[2].c.UpdateSchedule(ctx, &wfdv1.UpdateScheduleRequest{Schedule: &wfdv1.Schedule{
		ScheduleId: "every-second", Spec: s.Spec, Action: s.Action, Policy: s.Policy, Paused: true,
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := rs[0].c.GetSchedule(ctx, &wfdv1.GetScheduleRequest{ScheduleId: "every-second"})
	if err != nil {
		t.Fatal(err)
	}
	info := res.Schedule.Info
	if info.Failed != 0 || info.Skipped != 0 || info.Missed != 0 {
		t.Fatalf("outcomes: %v", info)
	}
	seen := map[string]bool{}
	for _, o := range info.Recent {
		if o.Kind != wfdv1.ScheduleOutcomeKind_SCHEDULE_OUTCOME_KIND_STARTED || seen[o.HandlerId] {
			t.Fatalf("outcome %v (twice: %v)", o, seen[o.HandlerId])
		}
		seen[o.HandlerId] = true
	}
	list, err := rs[1].c.ListHandlers(ctx, &wfdv1.ListHandlersRequest{Workflow: "sequence", PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	// Every recorded run has its handler; a handler not recorded can only
	// be of a tick in flight when the schedule was paused (its record lost
	// to the pause's), later than every recorded one.
	last := info.Recent[0].Tick.AsTime()
	have := map[string]bool{}
	for _, h := range list.Handlers {
		have[h.HandlerId] = true
		if h.ScheduleId != "every-second" || (!seen[h.HandlerId] && !h.ScheduleTick.AsTime().After(last)) {
			t.Fatalf("handler %s (schedule %q, tick %v) is not one of the recorded runs (last %v)", h.HandlerId, h.ScheduleId, h.ScheduleTick.AsTime(), last)
		}
	}
	for id := range seen {
		if !have[id] {
			t.Fatalf("recorded run %s has no handler", id)
		}
	}
}
