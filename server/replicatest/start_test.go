package replicatest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
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
