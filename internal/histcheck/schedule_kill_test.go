package histcheck_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/histcheck"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestScheduleTicksOnceThroughKills: a schedule ticking every second on
// three real replicas (wfd serve on one PostgreSQL database), while one
// replica after another is SIGKILLed at whatever point of a tick it is
// (its start made and not recorded, say) and restarted: every tick from
// the first to the last recorded one has exactly one handler (none lost,
// none doubled), and every recorded start names one.
func TestScheduleTicksOnceThroughKills(t *testing.T) {
	if testing.Short() {
		t.Skip("real replicas and PostgreSQL: not in -short mode")
	}
	c := histcheck.StartCluster(t, histcheck.ClusterConfig{Bin: wfdBin(t), Dir: t.TempDir()})
	ctx := context.Background()
	cl := c.Replicas[0].Client()
	spec := &wfdv1.Schedule{ScheduleId: "tick", Spec: &wfdv1.ScheduleSpec{Interval: durationpb.New(time.Second)},
		Action: &wfdv1.ScheduleAction{Workflow: "approval"}, Policy: &wfdv1.SchedulePolicy{Overlap: wfdv1.OverlapPolicy_OVERLAP_POLICY_ALLOW}}
	if _, err := cl.CreateSchedule(ctx, &wfdv1.CreateScheduleRequest{Schedule: spec}); err != nil {
		t.Fatal(err)
	}
	// started reads the count through a replica that is up.
	started := func(via *histcheck.Replica) uint64 {
		res, err := via.Client().GetSchedule(ctx, &wfdv1.GetScheduleRequest{ScheduleId: "tick"})
		if err != nil {
			return 0
		}
		return res.Schedule.Info.Started
	}
	for round, victim := range []int{0, 1, 2, 0} {
		via := c.Replicas[(victim+1)%3]
		base := started(via)
		testwait.For(t, "two more ticks", func() bool { return started(via) >= base+2 })
		if err := c.Replicas[victim].Kill(); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, "a tick without the victim", func() bool { return started(via) >= base+3 })
		if err := c.Replicas[victim].Start(ctx); err != nil {
			t.Fatalf("round %d: restart: %v", round, err)
		}
	}
	via := c.Replicas[1].Client()
	spec.Paused = true
	if _, err := via.UpdateSchedule(ctx, &wfdv1.UpdateScheduleRequest{Schedule: spec}); err != nil {
		t.Fatal(err)
	}
	res, err := via.GetSchedule(ctx, &wfdv1.GetScheduleRequest{ScheduleId: "tick"})
	if err != nil {
		t.Fatal(err)
	}
	info := res.Schedule.Info
	if info.Failed != 0 || info.Skipped != 0 || info.Missed != 0 {
		t.Fatalf("outcomes: %v", info)
	}
	recorded := map[string]bool{}
	for _, o := range info.Recent {
		recorded[o.HandlerId] = true
	}
	var ticks []time.Time
	have := map[string]bool{}
	for token := ""; ; {
		page, err := via.ListHandlers(ctx, &wfdv1.ListHandlersRequest{Workflow: "approval", PageSize: 1000, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range page.Handlers {
			if h.ScheduleId == "tick" {
				ticks = append(ticks, h.ScheduleTick.AsTime())
				have[h.HandlerId] = true
			}
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	for id := range recorded {
		if !have[id] {
			t.Fatalf("recorded start %s has no handler", id)
		}
	}
	slices.SortFunc(ticks, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(ticks); i++ {
		if d := ticks[i].Sub(ticks[i-1]); d != time.Second {
			t.Fatalf("ticks %v and %v are %v apart: a tick was lost or doubled", ticks[i-1], ticks[i], d)
		}
	}
	// Handlers not recorded can only be of the ticks in flight at the
	// pause; the recorded count covers the others.
	if n := uint64(len(ticks)); n < info.Started || n > info.Started+3 {
		t.Fatalf("%d handlers for %d recorded starts", n, info.Started)
	}
	t.Logf("%d ticks through 4 kills, %d recorded", len(ticks), info.Started)
}
