package replicatest_test

import (
	"context"
	"fmt"
	"sync"
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

// leasedFaults is a faultstore that keeps the wrapped store's leases, so
// a replica runs on it.
type leasedFaults struct {
	*faultstore.Store
	persistence.Leaser
}

// TestReplicaRecoveryUndoesNothing is the issue's "a restarted replica
// undoes completions the others acknowledged", made deterministic.
// Replica a holds idle handlers and dies (its database cut off, so it
// leaves nothing behind: they stay active, under its leases). A new a
// starts; between its recovery's read of those handlers and the leases
// it then takes, replica b (started then) answers them and they complete
// (once a's old leases have expired). The recovery,
// which would mark them released as it read them, must leave them
// completed: its writes are conditional on the revision it read.
func TestReplicaRecoveryUndoesNothing(t *testing.T) {
	direct := pgURL(t)
	p := startProxy(t, direct)
	const ttl = 600 * time.Millisecond
	a := startReplicaOpts(t, p.url, "a", ttl, true, nil)
	ctx := context.Background()
	ids := []string{"x1", "x2", "x3"}
	for _, id := range ids {
		// Unavailable (a's renewal lagging its short ttl on a busy
		// machine) asks for a retry; the handler id makes it idempotent.
		testwait.Until(t, func() error {
			_, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "sequence", HandlerId: id, Input: sequenceOf(1)})
			if err == nil || connect.CodeOf(err) == connect.CodeAlreadyExists {
				return nil
			}
			if connect.CodeOf(err) != connect.CodeUnavailable {
				t.Fatal(err)
			}
			return err
		})
		testwait.For(t, id+" idle on a", func() bool { return handlerOn(t, a, id).GetIdle() != nil })
	}
	p.blackhole() // a dies without a word to the database
	p.close()
	a.stop()

	var (
		b    *replica
		once sync.Once
	)
	answered := make(chan struct{})
	a2 := startReplicaWith(t, direct, "a", ttl, false, func(o *server.Options) {
		leaser := o.Store.(persistence.Leaser)
		fs := faultstore.New(o.Store)
		o.Store = leasedFaults{fs, leaser}
		fs.Update(func(f *faultstore.Funcs) {
			f.ListHandlersFunc = func(ctx context.Context, q persistence.Query) ([]persistence.Handler, string, error) {
				hs, next, err := fs.Inner().ListHandlers(ctx, q)
				if q.Residency == persistence.ResidencyActive {
					// Recovery has read its page: b (started only now, so
					// nothing of it ran before the read) answers them.
					once.Do(func() {
						b = startReplica(t, direct, "b", ttl)
						answerAll(t, b, ids)
						close(answered)
					})
				}
				return hs, next, err
			}
		})
	})
	select {
	case <-answered:
	default:
		t.Fatal("a's recovery did not list its active handlers")
	}
	for _, id := range ids {
		for _, r := range []*replica{a2, b} {
			h := handlerOn(t, r, id)
			if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["count"].GetNumberValue() != 1 {
				t.Fatalf("%s read through %s after a's recovery = %v, want completed with count 1", id, r.id, h)
			}
		}
		if err := finishedOnce(ctx, b, id); err != nil {
			t.Fatal(err)
		}
	}
}

// answerAll sends each of ids its one number through r, retrying while
// the dead replica's leases have not expired, and waits until each has
// completed.
func answerAll(t *testing.T, r *replica, ids []string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		data, _ := structpb.NewStruct(map[string]any{"sender": "s", "seq": 1})
		req := &wfdv1.SendEventRequest{HandlerId: id, IdempotencyKey: "k-" + id, Event: &wfdv1.Event{Type: "num", Data: data}}
		testwait.Until(t, func() error {
			// Bounded: a call forwarded to the dead replica's address
			// must not hang the test.
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, err := r.c.SendEvent(ctx, req)
			if err != nil {
				return fmt.Errorf("answering %s through %s: %w", id, r.id, err)
			}
			return nil
		})
		finishedOn(t, r, id)
	}
}
