package replicatest_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
)

// TestReplicaRepeatedStartReadsUnderLease: a RunWorkflow repeated with the
// same handler id (a client's retry after a lost answer) through replica
// b, whose first read of the id is older than a's start of it (b was
// paused in between, say): b reads again once it holds the lease and
// answers with the handler a started, instead of starting another one
// over it (which the store refused with a record sequence conflict,
// answered Internal).
func TestReplicaRepeatedStartReadsUnderLease(t *testing.T) {
	url := pgURL(t)
	a := startReplica(t, url, "a", 30*time.Second)
	ctx := context.Background()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "sequence", HandlerId: "x", Input: sequenceOf(1)}); err != nil {
		t.Fatal(err)
	}
	answerAll(t, a, []string{"x"}) // completed: its lease is free
	var stale atomic.Bool
	b := startReplicaWith(t, url, "b", 30*time.Second, false, func(o *server.Options) {
		leaser := o.Store.(persistence.Leaser)
		fs := faultstore.New(o.Store)
		o.Store = leasedFaults{fs, leaser}
		fs.Update(func(f *faultstore.Funcs) {
			f.GetHandlerFunc = func(ctx context.Context, id string) (persistence.Handler, error) {
				if id == "x" && stale.CompareAndSwap(false, true) {
					return persistence.Handler{}, persistence.ErrNotFound // read before a's start
				}
				return fs.Inner().GetHandler(ctx, id)
			}
		})
	})
	res, err := b.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "sequence", HandlerId: "x", Input: sequenceOf(1)})
	if err != nil {
		t.Fatalf("repeated RunWorkflow through b: %v", err)
	}
	if !stale.Load() {
		t.Fatal("b never read x")
	}
	if h := res.GetHandler(); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["count"].GetNumberValue() != 1 {
		t.Fatalf("repeated RunWorkflow answered %v, want a's completed handler", h)
	}
	if err := finishedOnce(ctx, a, "x"); err != nil {
		t.Fatal(err)
	}
}

// TestReplicaSendEventStartIfMissing: SendEvent calls with start, racing
// for one handler id through three replicas, create one handler, and each
// call's event is delivered exactly once, whichever replica the call came
// through and wherever the handler lives. Plain SendEvents race with
// them, retrying until the handler exists (NOT_FOUND). Every caller
// retries UNAVAILABLE, as a client does: a plain SendEvent's load of the
// handler takes its lease and frees it when it finds nothing yet, so the
// lease may move while a call is forwarded (one hop only), which then
// does nothing and says so. A load that finds nothing must not free the
// lease a start on the same replica holds (claimStart).
func TestReplicaSendEventStartIfMissing(t *testing.T) {
	url := pgURL(t)
	rs := []*replica{startReplica(t, url, "a", 30*time.Second), startReplica(t, url, "b", 30*time.Second), startReplica(t, url, "c", 30*time.Second)}
	ctx := context.Background()
	const withStart, plain = 12, 3
	total := withStart + plain
	var started atomic.Int32
	var wg sync.WaitGroup
	for i := range total {
		r := rs[i%len(rs)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, _ := structpb.NewStruct(map[string]any{"sender": fmt.Sprintf("s%d", i), "seq": 1})
			req := &wfdv1.SendEventRequest{HandlerId: "sws", IdempotencyKey: fmt.Sprintf("k%d", i), Event: &wfdv1.Event{Type: "num", Data: data}}
			if i >= withStart {
				testwait.Until(t, func() error {
					_, err := r.c.SendEvent(ctx, req)
					if c := connect.CodeOf(err); c != connect.CodeNotFound && c != connect.CodeUnavailable {
						return nil // answered; checked below
					}
					return err
				})
				return
			}
			req.Start = &wfdv1.StartIfMissing{Workflow: "sequence", Input: sequenceOf(total)}
			var res *wfdv1.SendEventResponse
			testwait.Until(t, func() error {
				var err error
				res, err = r.c.SendEvent(ctx, req)
				if connect.CodeOf(err) == connect.CodeUnavailable {
					return err // the lease moved on the way: nothing was done
				}
				if err != nil {
					t.Errorf("call %d through %s: %v", i, r.id, err)
				}
				return nil
			})
			if res.GetStarted() {
				started.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := started.Load(); n != 1 {
		t.Fatalf("%d calls say they started the handler, want 1", n)
	}
	h := finishedOn(t, rs[1], "sws")
	if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["count"].GetNumberValue() != float64(total) {
		t.Fatalf("handler ended %v, want completed with count %d", h, total)
	}
	if err := finishedOnce(ctx, rs[2], "sws"); err != nil {
		t.Fatal(err)
	}
}
