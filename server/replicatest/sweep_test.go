package replicatest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/server"
)

// counts counts events by handler id, safely from many goroutines.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[id]++
}

func (c *counts) get(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

// busy is a workflow of one step that runs run.
func busy(run func(ctx context.Context, sc *engine.StepContext) error) engine.Workflow {
	return engine.Workflow{
		Name: "busy",
		Steps: []engine.Step{{Name: "work", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(ctx context.Context, sc *engine.StepContext, _ engine.Event) error { return run(ctx, sc) }}},
	}
}

// finishedRecords counts the handler_finished records of handler id's
// stream, read through r to its end.
func finishedRecords(t *testing.T, r *replica, id string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	st, err := r.c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	n := 0
	for st.Receive() {
		if st.Msg().GetRecord().GetHandlerFinished() != nil {
			n++
		}
	}
	if err := st.Err(); err != nil {
		t.Fatalf("stream of %s: %v", id, err)
	}
	return n
}

func handlerOf(t *testing.T, r *replica, id string) *wfdv1.Handler {
	t.Helper()
	res, err := r.c.GetHandler(context.Background(), &wfdv1.GetHandlerRequest{HandlerId: id})
	if err != nil {
		t.Fatalf("GetHandler %s on %s: %v", id, r.id, err)
	}
	return res.GetHandler()
}

// TestReplicaDeadOwnerSwept: replica A dies (its database connection goes
// silent: it can neither renew nor leave, as after a SIGKILL) with
// handlers in memory: some busy (a step running), some idle. Replica B,
// with no call and no timer for them, picks them up once A's leases have
// expired: the busy ones run on and complete, each exactly once; the idle
// ones are marked released without being loaded, and answer later calls.
func TestReplicaDeadOwnerSwept(t *testing.T) {
	const n = 5
	direct := pgURL(t)
	p := startProxy(t, direct)
	var (
		startedOnA atomic.Int32
		gate       = make(chan struct{}) // closed when the test ends
		ranOnB     counts
	)
	a := startReplicaWith(t, p.url, "a", time.Second, true, func(o *server.Options) {
		o.Workflows = append(o.Workflows, busy(func(ctx context.Context, _ *engine.StepContext) error {
			startedOnA.Add(1)
			select { // A's step never ends while A is alive
			case <-ctx.Done():
				return ctx.Err()
			case <-gate:
				return errors.New("the test is over")
			}
		}))
	})
	b := startReplicaWith(t, direct, "b", 3*time.Second, false, func(o *server.Options) {
		o.Workflows = append(o.Workflows, busy(func(_ context.Context, sc *engine.StepContext) error {
			ranOnB.add(sc.HandlerID())
			return sc.Send(engine.StopEvent, &structpb.Struct{})
		}))
	})
	ctx := context.Background()
	for i := range n {
		for _, wf := range []string{"busy", "counter"} {
			if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: wf, HandlerId: fmt.Sprintf("%s%d", wf, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	testwait.For(t, "a's busy steps to start and its counters to be idle", func() bool {
		if startedOnA.Load() < n {
			return false
		}
		for i := range n {
			if handlerOf(t, b, fmt.Sprintf("counter%d", i)).GetIdle() == nil {
				return false
			}
		}
		return true
	})
	for i := range n {
		if o := b.owner(t, fmt.Sprintf("busy%d", i)); o != "a" {
			t.Fatalf("busy%d owned by %q before a died, want a", i, o)
		}
	}

	p.blackhole() // a is dead to the database
	for i := range n {
		id := fmt.Sprintf("busy%d", i)
		testwait.For(t, id+" to complete on b", func() bool {
			return handlerOf(t, b, id).GetStatus() == wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED
		})
		if got := finishedRecords(t, b, id); got != 1 {
			t.Errorf("%s has %d handler_finished records, want 1", id, got)
		}
		if ranOnB.get(id) < 1 {
			t.Errorf("%s's step did not run on b", id)
		}
	}
	for i := range n {
		id := fmt.Sprintf("counter%d", i)
		testwait.For(t, id+" to be released by b", func() bool {
			return handlerOf(t, b, id).GetResidency() == wfdv1.Residency_RESIDENCY_RELEASED
		})
		if h := handlerOf(t, b, id); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || h.GetOwner() != "" {
			t.Errorf("%s after the sweep = %v, want running, released, no owner", id, h)
		}
	}
	if got := b.inMemory(t); got != 0 {
		t.Errorf("b has %d handlers in memory after the sweep, want 0 (the busy ones completed, the idle ones were not loaded)", got)
	}
	for range 3 {
		if err := b.inc("counter0"); err != nil {
			t.Fatalf("inc of a swept idle handler through b: %v", err)
		}
	}
	if h := handlerOf(t, b, "counter0"); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED {
		t.Errorf("counter0 after three incs = %v, want completed", h)
	}
	close(gate)
	p.close() // a's shutdown fails fast instead of waiting for answers
}

// sleeper sleeps until the time in its input ("until", Unix
// milliseconds), then records on fired that it woke, and completes.
func sleeper(replica string, fired *counts) engine.Workflow {
	return engine.Workflow{
		Name: "sleeper",
		Steps: []engine.Step{{Name: "nap", Accepts: []string{engine.StartEvent}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, in engine.Event) error {
				until := time.UnixMilli(int64(in.Data.GetFields()["until"].GetNumberValue()))
				if err := sc.Sleep(time.Until(until)); err != nil {
					return err
				}
				fired.add(replica + "/" + sc.HandlerID())
				return sc.Send(engine.StopEvent, &structpb.Struct{})
			}}},
	}
}

// TestReplicaTimersClaimedOnce: 200 handlers, released to the database,
// sleep until the same moment; two replicas' schedulers claim their due
// timers concurrently. Each timer fires exactly once (one step run ended
// after the sleep, in the stream) and every handler completes once. How
// the timers split between the replicas is not guaranteed (one claim may
// take them all): it is logged.
func TestReplicaTimersClaimedOnce(t *testing.T) {
	const n = 200
	url := pgtest.NewDatabase(t)
	var fired counts
	rs := make([]*replica, 2)
	for i, id := range []string{"a", "b"} {
		rs[i] = startReplicaWith(t, url, id, 5*time.Second, false, func(o *server.Options) {
			o.Workflows = append(o.Workflows, sleeper(id, &fired))
			o.IdleTimeout = 20 * time.Millisecond
		})
	}
	until := time.Now().Add(10 * time.Second)
	input, err := structpb.NewStruct(map[string]any{"until": float64(until.UnixMilli())})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				// Unavailable is retried, as clients do (a commit may fail).
				testwait.Until(t, func() error {
					_, err := rs[i%2].c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{
						Workflow: "sleeper", HandlerId: fmt.Sprintf("s%03d", i), Input: input})
					return err
				})
			}
		})
	}
	wg.Wait()
	released := 0
	if res, err := rs[0].c.ListHandlers(context.Background(), &wfdv1.ListHandlersRequest{
		Workflow: "sleeper", Residency: wfdv1.Residency_RESIDENCY_RELEASED, PageSize: 1000,
	}); err == nil {
		released = len(res.GetHandlers())
	}
	t.Logf("%d of %d handlers released %v before their timers are due", released, n, time.Until(until).Round(time.Millisecond))

	testwait.For(t, "every handler to complete", func() bool {
		res, err := rs[0].c.ListHandlers(context.Background(), &wfdv1.ListHandlersRequest{
			Workflow: "sleeper", Statuses: []wfdv1.HandlerStatus{wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED}, PageSize: 1000,
		})
		return err == nil && len(res.GetHandlers()) == n
	})
	onA := 0
	for i := range n {
		id := fmt.Sprintf("s%03d", i)
		// Durably: the timer ended the step once, and the handler once.
		if ended, finished := wokeRecords(t, rs[i%2], id); ended != 1 || finished != 1 {
			t.Errorf("%s: %d step runs ended after the sleep and %d handler_finished records, want 1 and 1", id, ended, finished)
		}
		// Only the durable records are exactly once: a run is repeated
		// (steps are at least once) when its commit fails, and the
		// handler may then be loaded again anywhere.
		if fired.get("a/"+id) > 0 {
			onA++
		}
	}
	t.Logf("timers fired on a: %d, on b: %d (or both, after a failed commit)", onA, n-onA)
}

// wokeRecords counts, in handler id's stream read through r to its end,
// the step runs that ended emitting stop (after the sleep) and the
// handler_finished records.
func wokeRecords(t *testing.T, r *replica, id string) (ended, finished int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	st, err := r.c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	for st.Receive() {
		rec := st.Msg().GetRecord()
		if s := rec.GetStepStateChanged(); s != nil && !s.GetRunning() && slices.Contains(s.GetEmittedEventTypes(), engine.StopEvent) {
			ended++
		}
		if rec.GetHandlerFinished() != nil {
			finished++
		}
	}
	if err := st.Err(); err != nil {
		t.Fatalf("stream of %s: %v", id, err)
	}
	return ended, finished
}

// TestReplicaListOwners: ListHandlers on any replica names the replica
// that holds each running handler, as GetHandler does.
func TestReplicaListOwners(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 30*time.Second)
	ctx := context.Background()
	for _, c := range []struct {
		r  *replica
		id string
	}{{a, "ha"}, {b, "hb"}} {
		if _, err := c.r.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: c.id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []*replica{a, b} {
		res, err := r.c.ListHandlers(ctx, &wfdv1.ListHandlersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, h := range res.GetHandlers() {
			got[h.GetHandlerId()] = h.GetOwner()
		}
		if got["ha"] != "a" || got["hb"] != "b" || len(got) != 2 {
			t.Errorf("ListHandlers on %s: owners %v, want ha: a, hb: b", r.id, got)
		}
	}
}

// TestReplicaLeftHandlersNotLoaded: a replica that shuts down cleanly
// leaves (its leases are freed at once) with idle handlers in memory; the
// other replica's sweep does not load them (they stay in the store, as a
// restart would leave them, released), and they answer calls there later.
func TestReplicaLeftHandlersNotLoaded(t *testing.T) {
	const n = 5
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	b := startReplica(t, url, "b", 600*time.Millisecond) // sweeps every 200ms
	ctx := context.Background()
	for i := range n {
		id := fmt.Sprintf("h%d", i)
		if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: id}); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, id+" idle on a", func() bool { return handlerOf(t, b, id).GetIdle() != nil })
	}
	a.stop()
	for i := range n {
		id := fmt.Sprintf("h%d", i)
		testwait.For(t, id+" released", func() bool {
			return handlerOf(t, b, id).GetResidency() == wfdv1.Residency_RESIDENCY_RELEASED
		})
	}
	res, err := b.c.GetStats(ctx, &wfdv1.GetStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetRehydrationsTotal() != 0 || b.inMemory(t) != 0 {
		t.Fatalf("b loaded %d handlers (%d in memory), want none", res.GetRehydrationsTotal(), b.inMemory(t))
	}
	if err := b.inc("h0"); err != nil {
		t.Fatalf("inc of a handler a left, through b: %v", err)
	}
}
