package replicatest_test

// The acceptance tests of several replicas (issue 16, "Tests"): three
// in-process replicas on one real PostgreSQL database, driven only through
// their public API, as clients behind a load balancer would drive them.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// startThree starts replicas a, b and c on one new database, serving the
// approval workflow besides the package's.
func startThree(t *testing.T, ttl time.Duration) []*replica {
	t.Helper()
	url := pgtest.NewDatabase(t)
	more := func(o *server.Options) { o.Workflows = append(o.Workflows, workflows.Approval()) }
	var rs []*replica
	for _, id := range []string{"a", "b", "c"} {
		rs = append(rs, startReplicaWith(t, url, id, ttl, false, more))
	}
	return rs
}

// newRand is a seeded source for a test's random choices; the seed is
// logged so that a failure can be replayed.
func newRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	t.Logf("random seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed>>1))
}

// retryUnavailable calls fn until it succeeds, fails otherwise than with
// Unavailable (the only code that says "nothing happened, try again"), or
// ctx ends; it counts the retries in retries.
func retryUnavailable(ctx context.Context, retries *atomic.Int64, fn func() error) error {
	pause := time.Millisecond
	for {
		err := fn()
		if connect.CodeOf(err) != connect.CodeUnavailable {
			return err
		}
		retries.Add(1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (retrying since Unavailable: %w)", ctx.Err(), err)
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// records reads handler id's whole stream (internal records included)
// through r.
func records(ctx context.Context, r *replica, id string) ([]*wfdv1.Record, error) {
	st, err := r.c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: id, IncludeInternal: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }()
	var out []*wfdv1.Record
	for st.Receive() {
		if rec := st.Msg().GetRecord(); rec != nil {
			out = append(out, rec)
		}
	}
	return out, st.Err()
}

// finishedOnce checks that a finished handler's stream, read through r,
// holds exactly one terminal record, as its last, with sequence numbers
// 1..n without gaps.
func finishedOnce(ctx context.Context, r *replica, id string) error {
	recs, err := records(ctx, r, id)
	if err != nil {
		return fmt.Errorf("stream of %s through %s: %w", id, r.id, err)
	}
	finished := 0
	for i, rec := range recs {
		if rec.GetSeq() != uint64(i+1) {
			return fmt.Errorf("%s: record %d where %d was due", id, rec.GetSeq(), i+1)
		}
		if rec.GetHandlerFinished() != nil {
			finished++
		}
	}
	if finished != 1 || recs[len(recs)-1].GetHandlerFinished() == nil {
		return fmt.Errorf("%s: %d terminal records in %d, want exactly one, the last", id, finished, len(recs))
	}
	return nil
}

// TestAcceptanceRandomReplicas: 60 approval handlers, each started through
// a random replica, about a third of them released through a random
// replica once parked, and answered through a random other replica than
// the one that started them (so that most answers are forwarded, and a
// released one is woken wherever its answer lands). Each completes
// exactly once, with its own answer. Answers carry idempotency keys and
// are retried on Unavailable only.
func TestAcceptanceRandomReplicas(t *testing.T) {
	rs := startThree(t, 30*time.Second)
	rng := newRand(t)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()

	const handlers, clients = 60, 6
	type plan struct {
		id                   string
		start, release, send *replica // release nil: not released
		approved             bool
	}
	plans := make([]plan, handlers)
	for i := range plans {
		p := plan{id: fmt.Sprintf("acc-%02d", i), start: rs[rng.IntN(3)], approved: i%3 != 0}
		if rng.IntN(3) == 0 {
			p.release = rs[rng.IntN(3)]
		}
		p.send = p.start
		for p.send == p.start {
			p.send = rs[rng.IntN(3)]
		}
		plans[i] = p
	}
	var retries, released atomic.Int64
	run := func(p plan) error {
		_, err := p.start.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: p.id, Input: &structpb.Struct{}})
		if err != nil {
			return fmt.Errorf("start %s through %s: %w", p.id, p.start.id, err)
		}
		// Parked: idle, as any replica sees it.
		for {
			res, err := p.send.c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: p.id})
			if err != nil {
				return fmt.Errorf("GetHandler %s through %s: %w", p.id, p.send.id, err)
			}
			if res.GetHandler().GetIdle() != nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s never parked: %v", p.id, res.GetHandler())
			case <-time.After(time.Millisecond):
			}
		}
		if p.release != nil {
			if err := retryUnavailable(ctx, &retries, func() error {
				_, err := p.release.c.ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: p.id})
				return err
			}); err != nil {
				return fmt.Errorf("release %s through %s: %w", p.id, p.release.id, err)
			}
			released.Add(1)
		}
		data, _ := structpb.NewStruct(map[string]any{"approved": p.approved, "comment": "for " + p.id})
		req := &wfdv1.SendEventRequest{HandlerId: p.id, IdempotencyKey: "answer-" + p.id, Event: &wfdv1.Event{Type: workflows.ApprovalEvent, Data: data}}
		if err := retryUnavailable(ctx, &retries, func() error {
			_, err := p.send.c.SendEvent(ctx, req)
			return err
		}); err != nil {
			return fmt.Errorf("answer %s through %s: %w", p.id, p.send.id, err)
		}
		return nil
	}
	var next atomic.Int64
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= handlers {
					return
				}
				if err := run(plans[i]); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d handlers, %d released; %d calls retried after Unavailable", handlers, released.Load(), retries.Load())

	for _, p := range plans {
		via := rs[rng.IntN(3)]
		h := finishedOn(t, via, p.id)
		r := h.GetResult().GetFields()
		if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || r["approved"].GetBoolValue() != p.approved || r["comment"].GetStringValue() != "for "+p.id {
			t.Fatalf("%s = %v, want completed with approved %v and its own comment", p.id, h, p.approved)
		}
		if err := finishedOnce(ctx, rs[rng.IntN(3)], p.id); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAcceptanceOneLoadManySenders: 500 concurrent SendEvents through all
// three replicas to one released handler. Fifty senders each send ten
// numbered events, one after another, each through the next replica in
// turn, all starting together. The handler is loaded exactly once (one
// rehydration over the three replicas): the replica that wins its lease
// loads it, the others forward to it. Every event is acknowledged
// (retried on Unavailable only, with an idempotency key), delivered
// exactly once, and each sender's arrive in its order.
func TestAcceptanceOneLoadManySenders(t *testing.T) {
	rs := startThree(t, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	const senders, each = 50, 10
	in, _ := structpb.NewStruct(map[string]any{"total": senders * each})
	if _, err := rs[0].c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "sequence", HandlerId: "seq", Input: in}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "seq idle", func() bool { return handlerOn(t, rs[0], "seq").GetIdle() != nil })
	if _, err := rs[1].c.ReleaseHandler(ctx, &wfdv1.ReleaseHandlerRequest{HandlerId: "seq"}); err != nil {
		t.Fatal(err)
	}
	// Released, and its lease freed (in the background, after the
	// release committed): nobody owns it.
	testwait.For(t, "seq released by all", func() bool {
		h := handlerOn(t, rs[2], "seq")
		return h.GetResidency() == wfdv1.Residency_RESIDENCY_RELEASED && h.GetOwner() == ""
	})
	loads := func() (n int64) {
		for _, r := range rs {
			res, err := r.c.GetStats(ctx, &wfdv1.GetStatsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			n += res.GetRehydrationsTotal()
		}
		return n
	}
	before := loads()

	var retries atomic.Int64
	start := make(chan struct{})
	errs := make(chan error, senders)
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			<-start
			for seq := 1; seq <= each; seq++ {
				via := rs[(s+seq)%len(rs)]
				data, _ := structpb.NewStruct(map[string]any{"sender": fmt.Sprint(s), "seq": seq})
				req := &wfdv1.SendEventRequest{HandlerId: "seq", IdempotencyKey: fmt.Sprintf("%d-%d", s, seq), Event: &wfdv1.Event{Type: "num", Data: data}}
				if err := retryUnavailable(ctx, &retries, func() error {
					_, err := via.c.SendEvent(ctx, req)
					return err
				}); err != nil {
					errs <- fmt.Errorf("sender %d seq %d through %s: %w", s, seq, via.id, err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%d SendEvents retried after Unavailable", retries.Load())

	h := finishedOn(t, rs[1], "seq")
	if r := h.GetResult().GetFields(); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED ||
		r["count"].GetNumberValue() != senders*each || r["unordered"].GetNumberValue() != 0 {
		t.Fatalf("seq = %v, want completed with count %d, none unordered", h, senders*each)
	}
	if n := loads() - before; n != 1 {
		t.Fatalf("the released handler was loaded %d times over the three replicas, want once", n)
	}
	// The records: each sender's numbers exactly once each, in order.
	recs, err := records(ctx, rs[2], "seq")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, rec := range recs {
		if ev := rec.GetEventWritten(); ev.GetType() == "got" {
			f := ev.GetData().GetFields()
			got[f["sender"].GetStringValue()] = append(got[f["sender"].GetStringValue()], int(f["seq"].GetNumberValue()))
		}
	}
	want := make([]int, each)
	for i := range want {
		want[i] = i + 1
	}
	for s := range senders {
		if seqs := got[fmt.Sprint(s)]; !slices.Equal(seqs, want) {
			t.Errorf("sender %d's events arrived as %v, want %v", s, seqs, want)
		}
	}
	if err := finishedOnce(ctx, rs[0], "seq"); err != nil {
		t.Fatal(err)
	}
}
