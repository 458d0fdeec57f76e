package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/workflows"
)

// counter accepts "inc" events from outside, writes each one's data back
// to the stream, and completes after `want` (its input) of them.
func counter() engine.Workflow {
	return engine.Workflow{
		Name:     "counter",
		External: []string{"inc"},
		Steps: []engine.Step{
			{Name: "init", Accepts: []string{engine.StartEvent}, Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				return sc.Set("want", in.Data.Fields["want"])
			}},
			{Name: "count", Accepts: []string{"inc"}, Emits: []string{engine.StopEvent}, Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				sc.Write("got", in.Data)
				n, _ := sc.Get("count")
				count := n.GetNumberValue() + 1
				if err := sc.Set("count", structpb.NewNumberValue(count)); err != nil {
					return err
				}
				if want, _ := sc.Get("want"); count == want.GetNumberValue() {
					return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"count": structpb.NewNumberValue(count)}})
				}
				return nil
			}},
		},
	}
}

// got returns the n of every "got" event on the stream, in stream order.
func got(recs []*wfdv1.Record) []int {
	var out []int
	for _, r := range recs {
		if e := r.GetEventWritten(); e != nil && e.Type == "got" {
			out = append(out, int(e.Data.Fields["n"].GetNumberValue()))
		}
	}
	return out
}

// waiting waits for "go" with a deadline given in its input and completes
// with whether it timed out.
func waiting() engine.Workflow {
	return engine.Workflow{Name: "waiting", Steps: []engine.Step{{
		Name: "wait", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
		Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
			d := time.Duration(in.Data.Fields["ms"].GetNumberValue()) * time.Millisecond
			_, err := sc.WaitFor("go", engine.WaitOptions{Timeout: d})
			if err != nil && !strings.Contains(err.Error(), engine.ErrTimeout.Error()) {
				return err
			}
			return sc.Send(engine.StopEvent, &structpb.Struct{Fields: map[string]*structpb.Value{"timedOut": structpb.NewBoolValue(err != nil)}})
		},
	}}}
}

func testWorkflows() []engine.Workflow {
	return append(workflows.All(), counter(), waiting())
}

func release(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) *wfdv1.Handler {
	t.Helper()
	res, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatalf("ReleaseHandler: %v", err)
	}
	if res.Handler.Residency != wfdv1.Residency_RESIDENCY_RELEASED {
		t.Fatalf("after ReleaseHandler: %v", res.Handler)
	}
	return res.Handler
}

func stats(t *testing.T, c wfdv1connect.WorkflowServiceClient) *wfdv1.GetStatsResponse {
	t.Helper()
	res, err := c.GetStats(ctxT(t), &wfdv1.GetStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func waitResidency(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, want wfdv1.Residency) {
	t.Helper()
	testwait.Until(t, func() error {
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		if err != nil {
			t.Fatal(err)
		}
		if res.Handler.Residency != want {
			return fmt.Errorf("handler %s is %v, want %v", id, res.Handler.Residency, want)
		}
		return nil
	})
}

func TestReleaseByRPC(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)
	released := release(t, c, h.HandlerId)
	if released.Idle == nil || len(released.Idle.Waiters) != 1 {
		t.Fatalf("released handler lost its idle metadata: %v", released)
	}
	release(t, c, h.HandlerId) // releasing a released handler is a no-op
	if s := stats(t, c); s.HandlersActive != 0 || s.HandlersReleased != 1 || s.ReleasesTotal != 1 {
		t.Fatalf("stats %v", s)
	}

	busy := run(t, c, "counter", map[string]any{"want": 1.0})
	waitIdle(t, c, busy.HandlerId)
	// Not idle: a step is running. fanin never idles; use a handler that is
	// finished for the other refusal.
	done := run(t, c, "echo", nil)
	collect(t, c, done.HandlerId, 0)
	_, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: done.HandlerId})
	wantCode(t, err, connect.CodeFailedPrecondition, "completed")

	// Send to the released handler: it wakes and completes.
	before := stats(t, c).RehydrationsTotal
	if _, err := sendEv(t, c, h.HandlerId, "approval", map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	recs := collect(t, c, h.HandlerId, 0)
	if k := kinds(recs); !strings.HasSuffix(k, "4:idle=true 5:released 6:restored 7:idle=false 8:decide started 9:decide ended 10:COMPLETED") {
		t.Fatalf("stream %s", k)
	}
	if s := stats(t, c); s.RehydrationsTotal != before+1 || s.RehydrateLatencyP99.AsDuration() <= 0 {
		t.Fatalf("stats after rehydrate %v", s)
	}
}

func TestReleaseNotIdle(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	slow := engine.Workflow{Name: "slow", Steps: []engine.Step{{Name: "s", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
		Run: func(ctx context.Context, _ *engine.StepContext, _ engine.Event) error {
			select {
			case <-hold:
			case <-ctx.Done():
			}
			return nil
		}}}}
	ts := startServer(t, serverConfig{workflows: []engine.Workflow{slow}})
	c := ts.client()
	h := run(t, c, "slow", nil)
	_, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: h.HandlerId})
	wantCode(t, err, connect.CodeFailedPrecondition, "not idle")
}

func TestReleaseByIdleTimeout(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows(), idleTimeout: 50 * time.Millisecond})
	c := ts.client()
	h := run(t, c, "approval", nil)
	waitResidency(t, c, h.HandlerId, wfdv1.Residency_RESIDENCY_RELEASED)
	if s := stats(t, c); s.ReleasesTotal != 1 || s.HandlersIdleInMemory != 0 {
		t.Fatalf("stats %v", s)
	}
	if _, err := sendEv(t, c, h.HandlerId, "approval", map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	if k := kinds(collect(t, c, h.HandlerId, 0)); !strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("stream %s", k)
	}
}

func TestReleaseByCap(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows(), maxIdle: 2})
	c := ts.client()
	var ids []string
	for range 5 {
		h := run(t, c, "approval", nil)
		waitIdle(t, c, h.HandlerId)
		ids = append(ids, h.HandlerId)
	}
	// The least recently active go first.
	for _, id := range ids[:3] {
		waitResidency(t, c, id, wfdv1.Residency_RESIDENCY_RELEASED)
	}
	// The idle list in memory follows the release's commit (Committed),
	// which the store shows first: wait for it.
	testwait.Until(t, func() error {
		if s := stats(t, c); s.HandlersIdleInMemory > 2 || s.HandlersReleased != 3 {
			return fmt.Errorf("stats %v", s)
		}
		return nil
	})
	for _, id := range ids[3:] {
		res, _ := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		if res.Handler.Residency != wfdv1.Residency_RESIDENCY_ACTIVE {
			t.Fatalf("a recent handler was released: %v", res.Handler)
		}
	}
}

// TestConcurrentSendsToReleased: 500 events at once to one released
// handler: one load, every event delivered once, taken in arrival order.
func TestConcurrentSendsToReleased(t *testing.T) {
	const n = 500
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client(connect.WithGRPC())
	h := run(t, c, "counter", map[string]any{"want": float64(n)})
	waitIdle(t, c, h.HandlerId)
	release(t, c, h.HandlerId)
	before := stats(t, c).RehydrationsTotal

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := sendEv(t, c, h.HandlerId, "inc", map[string]any{"n": float64(i)}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("SendEvent: %v", err)
	}
	if got := stats(t, c).RehydrationsTotal - before; got != 1 {
		t.Fatalf("%d loads for one handler", got)
	}
	recs := collect(t, c, h.HandlerId, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Fatalf("finished %v", fin)
	}
	if sorted := slices.Sorted(slices.Values(got(recs))); !slices.Equal(sorted, slices.Collect(func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	})) {
		t.Fatalf("events delivered: %v", sorted)
	}
}

// TestReleaseRacingEvents releases a handler over and over while events
// arrive: no event is lost.
func TestReleaseRacingEvents(t *testing.T) {
	const n = 200
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	h := run(t, c, "counter", map[string]any{"want": float64(n)})
	waitIdle(t, c, h.HandlerId)
	stop := make(chan struct{})
	var releaser sync.WaitGroup
	releaser.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := c.ReleaseHandler(ctxT(t), &wfdv1.ReleaseHandlerRequest{HandlerId: h.HandlerId})
			if err != nil && connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Errorf("ReleaseHandler: %v", err)
				return
			}
		}
	})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := sendEv(t, c, h.HandlerId, "inc", map[string]any{"n": float64(i)}); err != nil {
				t.Errorf("SendEvent %d: %v", i, err)
			}
		})
		if i%20 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	wg.Wait()
	close(stop)
	releaser.Wait()
	recs := collect(t, c, h.HandlerId, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	if fin.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || len(got(recs)) != n {
		t.Fatalf("finished %v with %d events", fin, len(got(recs)))
	}
	releases := 0
	for _, r := range recs {
		if r.GetHandlerReleased() != nil {
			releases++
		}
	}
	t.Logf("%d releases during %d events", releases, n)
}

func TestReleasedDeadlineFires(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	h := run(t, c, "waiting", map[string]any{"ms": 300.0})
	waitIdle(t, c, h.HandlerId)
	rel := release(t, c, h.HandlerId)
	deadline := rel.Idle.Waiters[0].Deadline.AsTime()
	recs := collect(t, c, h.HandlerId, 0)
	fin := recs[len(recs)-1].GetHandlerFinished()
	if !fin.GetResult().Fields["timedOut"].GetBoolValue() {
		t.Fatalf("finished %v", fin)
	}
	// How soon after the deadline it fires depends on the machine: the
	// release benchmark measures wake-up latency; here it must not be early.
	if late := recs[len(recs)-1].Time.AsTime().Sub(deadline); late < 0 {
		t.Fatalf("fired %v before its deadline", -late)
	}
}

func TestRestartKeepsReleasedAndFiresDeadlines(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, serverConfig{dir: dir, workflows: testWorkflows()})
	c := ts.client()
	var approvals []string
	for range 3 {
		h := run(t, c, "approval", nil)
		waitIdle(t, c, h.HandlerId)
		approvals = append(approvals, h.HandlerId)
	}
	release(t, c, approvals[0]) // released; the others idle in memory
	timed := run(t, c, "waiting", map[string]any{"ms": 400.0})
	due := waitIdle(t, c, timed.HandlerId).Idle.Waiters[0].Deadline.AsTime()
	ts.stop()
	// The deadline passes while the server is down.
	testwait.For(t, "the deadline to pass", func() bool { return time.Now().After(due) })

	ts = startServer(t, serverConfig{dir: dir, workflows: testWorkflows()})
	c = ts.client()
	// The overdue handler is woken at once and times out.
	recs := collect(t, c, timed.HandlerId, 0)
	if fin := recs[len(recs)-1].GetHandlerFinished(); !fin.GetResult().Fields["timedOut"].GetBoolValue() {
		t.Fatalf("finished %v", fin)
	}
	s := stats(t, c)
	if s.HandlersActive != 0 || s.HandlersReleased != 3 {
		t.Fatalf("after restart: %v (want every idle approval released)", s)
	}
	// A stream of a released handler does not load it.
	sctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if stream, err := c.StreamEvents(sctx, &wfdv1.StreamEventsRequest{HandlerId: approvals[1], IncludeInternal: true}); err == nil {
		for stream.Receive() {
		}
	}
	if s2 := stats(t, c); s2.RehydrationsTotal != s.RehydrationsTotal {
		t.Fatalf("streaming loaded the handler: %v", s2)
	}
	for _, id := range approvals {
		if _, err := sendEv(t, c, id, "approval", map[string]any{"approved": true}); err != nil {
			t.Fatal(err)
		}
		if k := kinds(collect(t, c, id, 0)); !strings.HasSuffix(k, "COMPLETED") {
			t.Fatalf("%s: %s", id, k)
		}
	}
}

// TestStreamSpansRelease: a subscriber stays subscribed through a release
// and sees what happens after the handler wakes.
func TestStreamSpansRelease(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client(connect.WithGRPCWeb())
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)
	s, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: h.HandlerId, IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var recs []*wfdv1.Record
	// next reads the stream up to and including record seq.
	next := func(seq uint64) {
		t.Helper()
		for len(recs) == 0 || recs[len(recs)-1].Seq < seq {
			if !s.Receive() {
				t.Fatalf("stream ended after %s: %v", kinds(recs), s.Err())
			}
			if r := s.Msg().GetRecord(); r != nil {
				recs = append(recs, r)
			}
		}
	}
	next(4) // subscribed while the handler is idle in memory
	release(t, c, h.HandlerId)
	next(5) // still subscribed once it is released
	if _, err := sendEv(t, c, h.HandlerId, "approval", map[string]any{"approved": true}); err != nil {
		t.Fatal(err)
	}
	next(10)
	want := "1:decide started 2:event question 3:decide parked 4:idle=true 5:released 6:restored 7:idle=false 8:decide started 9:decide ended 10:COMPLETED"
	if k := kinds(recs); k != want {
		t.Fatalf("stream %s\nwant   %s", k, want)
	}
}

func TestEventOfUnknownTypeDoesNotLoad(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	h := run(t, c, "approval", nil)
	waitIdle(t, c, h.HandlerId)
	release(t, c, h.HandlerId)
	before := stats(t, c).RehydrationsTotal
	_, err := sendEv(t, c, h.HandlerId, "nonsense", nil)
	wantCode(t, err, connect.CodeInvalidArgument, `does not accept "nonsense"`)
	if s := stats(t, c); s.RehydrationsTotal != before {
		t.Fatalf("a useless event loaded the handler: %v", s)
	}
	res, _ := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: h.HandlerId})
	if res.Handler.Residency != wfdv1.Residency_RESIDENCY_RELEASED || res.Handler.Idle == nil {
		t.Fatalf("after a refused event: %v", res.Handler)
	}
}
