package histcheck_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/histcheck"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestConcurrencyKeyThroughKills: six deploys to one environment (one at
// a time: a concurrency key) started through three real replicas; each
// running one is told it is done through one replica while another is
// SIGKILLed at once (mid-release, mid-admission, whatever it was doing)
// and restarted. Every deploy completes once, and their runs never
// overlap: each one's first record after its admission comes after the
// end of the one before.
func TestConcurrencyKeyThroughKills(t *testing.T) {
	if testing.Short() {
		t.Skip("real replicas and PostgreSQL: not in -short mode")
	}
	c := histcheck.StartCluster(t, histcheck.ClusterConfig{Bin: wfdBin(t), Dir: t.TempDir()})
	ctx := context.Background()
	const n = 6
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("dep-%d", i)
		in, _ := structpb.NewStruct(map[string]any{"environment": "prod", "version": fmt.Sprint(i)})
		if _, err := c.Replicas[i%3].Client().RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "deploy", HandlerId: ids[i], Input: in}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(id string) *wfdv1.Handler {
		var h *wfdv1.Handler
		testwait.Until(t, func() error {
			for _, r := range c.Replicas {
				res, err := r.Client().GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
				if err == nil {
					h = res.Handler
					return nil
				}
			}
			return fmt.Errorf("no replica answers for %s", id)
		})
		return h
	}
	for round := range n {
		// The one running now: the others are queued or done.
		var running string
		testwait.Until(t, func() error {
			running = ""
			for _, id := range ids {
				if get(id).GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING {
					running = id
				}
			}
			if running == "" {
				return fmt.Errorf("round %d: none running yet", round)
			}
			return nil
		})
		via, victim := c.Replicas[round%3], c.Replicas[(round+1)%3]
		data, _ := structpb.NewStruct(map[string]any{"ok": true})
		testwait.Until(t, func() error {
			_, err := via.Client().SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: running, IdempotencyKey: "done", Event: &wfdv1.Event{Type: "done", Data: data}})
			return err
		})
		if round < 4 {
			if err := victim.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := victim.Start(ctx); err != nil {
				t.Fatalf("round %d: restart: %v", round, err)
			}
		}
		testwait.For(t, running+" completed", func() bool {
			return get(running).GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
		})
	}
	// The runs, from each one's first step run to its end, never overlap.
	type span struct {
		id         string
		start, end time.Time
	}
	var spans []span
	for _, id := range ids {
		var recs []*wfdv1.Record
		testwait.Until(t, func() error {
			var err error
			recs, err = finishedRecords(ctx, c.Replicas[0].Client(), id)
			return err
		})
		s := span{id: id}
		finished := 0
		for _, r := range recs {
			if r.GetStepStateChanged() != nil && s.start.IsZero() {
				s.start = r.GetTime().AsTime()
			}
			if r.GetHandlerFinished() != nil {
				s.end = r.GetTime().AsTime()
				finished++
			}
		}
		if finished != 1 || s.start.IsZero() {
			t.Fatalf("%s: %d terminal records, ran at %v", id, finished, s.start)
		}
		spans = append(spans, s)
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start.Before(spans[i-1].end) {
			t.Fatalf("%s ran from %v, before %s ended at %v: two deploys of one environment overlapped",
				spans[i].id, spans[i].start, spans[i-1].id, spans[i-1].end)
		}
	}
}

// finishedRecords reads a finished handler's whole stream (it ends after
// the terminal record).
func finishedRecords(ctx context.Context, c wfdv1connect.WorkflowServiceClient, id string) ([]*wfdv1.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }()
	var out []*wfdv1.Record
	for s.Receive() {
		if r := s.Msg().GetRecord(); r != nil {
			out = append(out, r)
		}
	}
	return out, s.Err()
}
