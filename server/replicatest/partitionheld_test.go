package replicatest_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// TestAcceptancePartitionedReplica: of three replicas, A loses its
// database behind a partition that holds its packets (TCP keeps them and
// delivers them once the network heals) while it has a commit on its way:
// the answer to one of its parked handlers, which A takes itself. B and C
// answer A's six parked handlers, that one included with another answer,
// once A's leases have expired: they take them over and complete them.
// Then the partition heals and A's held commit reaches the database,
// which refuses it (A's lease was taken over): A's call answers
// Unavailable and nothing of it is applied; each handler completed
// exactly once, with the answer B or C gave it.
func TestAcceptancePartitionedReplica(t *testing.T) {
	direct := pgtest.NewDatabase(t)
	hp := startProxy(t, direct)
	more := func(o *server.Options) { o.Workflows = append(o.Workflows, workflows.Approval()) }
	var logs testlog.Buffer
	a := startReplicaWith(t, hp.url, "a", time.Second, true, func(o *server.Options) {
		more(o)
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	b := startReplicaWith(t, direct, "b", 30*time.Second, false, more)
	c := startReplicaWith(t, direct, "c", 30*time.Second, false, more)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("p-%d", i)
		ids = append(ids, id)
		if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "approval", HandlerId: id, Input: &structpb.Struct{}}); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, id+" parked", func() bool { return handlerOn(t, b, id).GetIdle() != nil })
	}
	answer := func(id, by string) *wfdv1.SendEventRequest {
		data, _ := structpb.NewStruct(map[string]any{"approved": true, "comment": "from " + by})
		return &wfdv1.SendEventRequest{HandlerId: id, IdempotencyKey: id + "-" + by, Event: &wfdv1.Event{Type: workflows.ApprovalEvent, Data: data}}
	}

	hp.hold()
	inflight := make(chan error, 1)
	go func() {
		// Marked as forwarded: A answers it itself, its commit held.
		fctx, info := connect.NewClientContext(ctx)
		info.RequestHeader().Set("Wfd-Forwarded", "test")
		_, err := a.c.SendEvent(fctx, answer("p-0", "a"))
		inflight <- err
	}()

	// B and C answer every handler. Until A's leases expire their calls
	// are forwarded to A, which cannot commit: each attempt has a deadline
	// past the lease ttl, and is retried (with its idempotency key).
	errs := make(chan error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		via := []*replica{b, c}[i%2]
		wg.Go(func() {
			for {
				actx, acancel := context.WithTimeout(ctx, 3*time.Second)
				_, err := via.c.SendEvent(actx, answer(id, via.id))
				acancel()
				switch connect.CodeOf(err) {
				case connect.CodeUnavailable, connect.CodeDeadlineExceeded:
					if ctx.Err() == nil {
						continue
					}
				}
				if err != nil {
					errs <- fmt.Errorf("answer %s through %s: %w", id, via.id, err)
				}
				return
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		for i, id := range ids {
			by := []string{"b", "c"}[i%2]
			var h *wfdv1.Handler
			testwait.For(t, id+" finished", func() bool {
				h = handlerOn(t, c, id)
				return h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING
			})
			if h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetResult().GetFields()["comment"].GetStringValue() != "from "+by {
				t.Fatalf("%s = %v, want completed with the answer from %s", id, h, by)
			}
			if err := finishedOnce(ctx, b, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	check()

	// The partition heals: A's held commit reaches the database, which
	// refuses it.
	hp.release()
	if err := <-inflight; connect.CodeOf(err) != connect.CodeUnavailable {
		t.Fatalf("A's answer to p-0 across the partition: %v, want Unavailable", err)
	}
	testwait.For(t, "A's held commit failed", func() bool { return commitErrors(t, a) > 0 })
	check()
	t.Logf("A's log:\n%s", logs.String())
}

// commitErrors is r's wfd_store_commit_errors_total.
func commitErrors(t *testing.T, r *replica) int {
	t.Helper()
	res, err := http.Get("http://" + r.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "wfd_store_commit_errors_total "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("no wfd_store_commit_errors_total in %s's metrics", r.id)
	return 0
}
