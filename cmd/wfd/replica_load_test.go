//go:build linux

package main_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestReplicaSIGKILLUnderLoad runs three `wfd serve` replicas on one
// PostgreSQL database (--lease-ttl 2s) under a load of approval handlers
// started, parked and answered through random replicas, and SIGKILLs one
// of them mid-load:
//
//   - 30 handlers are parked first, ten started through each replica, so
//     that the killed one owns some when it dies; they are answered after
//     the kill, through the survivors, which take them over once the dead
//     replica's leases have expired.
//   - 8 clients run the load: each starts a handler through a random live
//     replica, waits until it is parked, and answers it through another.
//     A call that fails because its replica died, or with Unavailable, is
//     retried through a live one (the start with the same handler id, the
//     answer with the same idempotency key). Replica a is killed once 40
//     handlers were answered; the load then goes on, through the
//     survivors, until 40 more were started and answered after the kill.
//
// Every handler completes exactly once (one terminal record in its stream,
// sequence numbers without gaps) with its own answer: no acknowledged
// start or answer is lost and none takes effect twice.
func TestReplicaSIGKILLUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wfd and kills it: not in -short mode")
	}
	bin := buildWfd(t)
	url := pgtest.NewDatabase(t)
	ids := []string{"a", "b", "c"}
	procs := make([]*wfdProc, len(ids))
	for i, id := range ids {
		procs[i] = startWfd(t, bin, t.TempDir(), "--store", url, "--replica-id", id, "--lease-ttl", "2s", "--console-addr", "")
	}
	l := &loadRun{procs: procs, ids: ids}
	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	ctx, cancel := context.WithTimeout(context.Background(), 3*testwait.Timeout)
	defer cancel()

	// 30 handlers parked before the load, ten per replica.
	rng := rand.New(rand.NewPCG(seed, 0))
	var parked []string
	for i := range 30 {
		id := fmt.Sprintf("parked-%02d", i)
		parked = append(parked, id)
		if _, err := procs[i%3].client().RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id, Input: input(i)}); err != nil {
			t.Fatal(err)
		}
		if err := l.waitParked(ctx, rng, id); err != nil {
			t.Fatal(err)
		}
	}

	// The load; a dies once 40 handlers were answered.
	const beforeKill, afterKill, clients = 40, 40, 8
	var (
		next, answered, answeredAfter atomic.Int64
		mu                            sync.Mutex
		started                       []string
	)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w+1)))
			for answeredAfter.Load() < afterKill {
				n := int(next.Add(1))
				id := fmt.Sprintf("load-%04d", n)
				after := l.killed.Load()
				if err := l.start(ctx, rng, id, n); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				started = append(started, id)
				mu.Unlock()
				if err := l.waitParked(ctx, rng, id); err != nil {
					errs <- err
					return
				}
				if err := l.answer(ctx, rng, id, n%2 == 0); err != nil {
					errs <- err
					return
				}
				if after {
					answeredAfter.Add(1)
				}
				if answered.Add(1) == beforeKill {
					l.kill(t)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if !l.killed.Load() {
		t.Fatal("the load ended before the kill")
	}
	<-procs[0].exited
	if ws := procs[0].cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGKILL {
		t.Fatalf("replica a did not die of SIGKILL: %v", procs[0].cmd.ProcessState)
	}

	// The handlers parked before the load, a third of them a's, are
	// answered now through the survivors.
	for i, id := range parked {
		if err := l.answer(ctx, rng, id, i%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d handlers started and answered by the load (%d answered after the kill), %d parked before it; %d calls retried",
		len(started), answeredAfter.Load(), len(parked), l.retries.Load())

	// Each completed exactly once, with its answer.
	check := func(id string, approved bool) {
		t.Helper()
		via := procs[1+rng.IntN(2)].client()
		var h *wfdv1.Handler
		testwait.For(t, id+" finished", func() bool {
			h = get(ctx, t, via, id)
			return h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING
		})
		r := h.GetResult().GetFields()
		if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || r["approved"].GetBoolValue() != approved || r["comment"].GetStringValue() != "for "+id {
			t.Fatalf("%s = %v, want completed with approved %v and its own comment", id, h, approved)
		}
		if err := completedOnce(ctx, via, id); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range parked {
		check(id, i%2 == 0)
	}
	for _, id := range started {
		var n int
		if _, err := fmt.Sscanf(id, "load-%d", &n); err != nil {
			t.Fatal(err)
		}
		check(id, n%2 == 0)
	}
	procs[1].stop(t)
	procs[2].stop(t)
}

// loadRun is the clients' view of the replicas: they pick a live one at
// random for every call, as behind a load balancer that notices a dead
// backend.
type loadRun struct {
	procs   []*wfdProc
	ids     []string
	killed  atomic.Bool // procs[0] was killed
	once    sync.Once
	retries atomic.Int64
}

func (l *loadRun) kill(t *testing.T) {
	l.once.Do(func() {
		// Marked before the signal: a call that a's death breaks must
		// see it as killed, or it would count as a real failure.
		l.killed.Store(true)
		if err := l.procs[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Errorf("SIGKILL: %v", err)
		}
	})
}

// call runs fn with a random live replica until it succeeds. It retries
// a call that failed because its replica was killed (whether or not it
// took effect: fn notes that itself, see start and answer) or with
// Unavailable (it did not).
func (l *loadRun) call(ctx context.Context, rng *rand.Rand, fn func(p *wfdProc) error) error {
	pause := time.Millisecond
	for {
		i := rng.IntN(len(l.procs))
		if l.killed.Load() {
			i = 1 + rng.IntN(len(l.procs)-1)
		}
		err := fn(l.procs[i])
		switch {
		case err == nil:
			return nil
		case i == 0 && l.killed.Load():
			// Made to the replica that died: retried like Unavailable.
		case connect.CodeOf(err) != connect.CodeUnavailable:
			return fmt.Errorf("through %s: %w", l.ids[i], err)
		}
		l.retries.Add(1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (retrying after: %w)", ctx.Err(), err)
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// start starts approval handler id; an attempt that may have taken
// effect makes a later AlreadyExists a success.
func (l *loadRun) start(ctx context.Context, rng *rand.Rand, id string, n int) error {
	var maybe bool
	req := &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id, Input: input(n)}
	err := l.call(ctx, rng, func(p *wfdProc) error {
		_, err := p.client().RunWorkflow(ctx, req)
		if connect.CodeOf(err) == connect.CodeAlreadyExists && maybe {
			return nil
		}
		if err != nil && p == l.procs[0] && l.killed.Load() {
			maybe = true
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	return nil
}

// answer answers handler id. A retry of an attempt that may have taken
// effect can find it finished already: FailedPrecondition is then a
// success (the final check sees which answer it took).
func (l *loadRun) answer(ctx context.Context, rng *rand.Rand, id string, approved bool) error {
	var maybe bool
	data, _ := structpb.NewStruct(map[string]any{"approved": approved, "comment": "for " + id})
	req := &wfdv1.SendEventRequest{HandlerId: id, IdempotencyKey: "answer-" + id, Event: &wfdv1.Event{Type: "approval", Data: data}}
	err := l.call(ctx, rng, func(p *wfdProc) error {
		_, err := p.client().SendEvent(ctx, req)
		if connect.CodeOf(err) == connect.CodeFailedPrecondition && maybe {
			return nil
		}
		if err != nil && p == l.procs[0] && l.killed.Load() {
			maybe = true
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("answer %s: %w", id, err)
	}
	return nil
}

// waitParked waits until handler id is idle, waiting for its answer, as
// a random live replica sees it.
func (l *loadRun) waitParked(ctx context.Context, rng *rand.Rand, id string) error {
	for {
		var h *wfdv1.Handler
		if err := l.call(ctx, rng, func(p *wfdProc) error {
			res, err := p.client().GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: id})
			h = res.GetHandler()
			return err
		}); err != nil {
			return fmt.Errorf("GetHandler %s: %w", id, err)
		}
		switch {
		case h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING:
			return fmt.Errorf("%s ended before its answer: %v", id, h)
		case h.GetIdle() != nil:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never parked: %v", id, h)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// completedOnce reads a finished handler's whole stream: sequence numbers
// 1..last without gaps, exactly one terminal record, the last.
func completedOnce(ctx context.Context, c interface {
	StreamEvents(context.Context, *wfdv1.StreamEventsRequest) (*connect.ServerStreamForClient[wfdv1.StreamEventsResponse], error)
}, id string,
) error {
	s, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		return fmt.Errorf("StreamEvents %s: %w", id, err)
	}
	defer func() { _ = s.Close() }()
	var seq uint64
	finished, last := 0, false
	for s.Receive() {
		r := s.Msg().GetRecord()
		if r == nil {
			continue
		}
		if seq++; r.GetSeq() != seq {
			return fmt.Errorf("%s: record %d where %d was due", id, r.GetSeq(), seq)
		}
		last = r.GetHandlerFinished() != nil
		if last {
			finished++
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	if finished != 1 || !last {
		return fmt.Errorf("%s: %d terminal records in %d, want exactly one, the last", id, finished, seq)
	}
	return nil
}
