package server_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
)

// TestCommitsUnavailableThenBack: the store cannot commit (a full disk):
// a call that needs a commit answers Unavailable with a message free of
// the store's detail, health says NOT_SERVING, and what was acknowledged
// before stays readable. Once commits work again, health says SERVING by
// itself and the same request succeeds; the handlers acknowledged before
// the outage go on.
func TestCommitsUnavailableThenBack(t *testing.T) {
	ctx := ctxT(t)
	f := startFaulty(t, server.Options{Workflows: testWorkflows()})
	c := f.client
	finished := run(t, c, "echo", map[string]any{"n": 1.0})
	finishedStream := kinds(collect(t, c, finished.HandlerId, 0))
	waiting := run(t, c, "approval", nil)
	waitIdle(t, c, waiting.HandlerId)
	if got := f.health(t); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before the outage: %v", got)
	}

	const path = "/var/lib/wfd/wfd.db"
	req := &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "during-outage", Input: st(t, map[string]any{"n": 2.0})}
	f.fs.Update(func(fn *faultstore.Funcs) {
		fn.WriteFunc = func(context.Context, ...persistence.Change) error {
			return fmt.Errorf("%w: bolt: write %s: %w", persistence.ErrUnavailable, path, syscall.ENOSPC)
		}
	})
	_, err := c.RunWorkflow(ctx, req)
	wantCode(t, err, connect.CodeUnavailable, "")
	var ce *connect.Error
	if !errorsAs(err, &ce) || !errorIDMessage("the store is unavailable; retry later").MatchString(ce.Message()) || strings.Contains(ce.Message(), path) {
		t.Fatalf("message %q", err)
	}
	if got := f.health(t); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health while commits fail: %v", got)
	}
	// What was acknowledged is still there.
	res, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: waiting.HandlerId})
	if err != nil || res.Handler.Status != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || res.Handler.Idle == nil {
		t.Fatalf("waiting handler during the outage: %v, %v", res.GetHandler(), err)
	}
	_, err = c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: req.HandlerId})
	wantCode(t, err, connect.CodeNotFound, "")

	// The handler of the call that failed left memory with its change:
	// nothing of it is left to commit when the store comes back.
	inMemory(t, c, 1) // the waiting handler
	f.fs.Reset()
	// The server's own probe commit finds the store back.
	testwait.For(t, "health SERVING once commits work", func() bool { return f.health(t) == healthpb.HealthCheckResponse_SERVING })
	again, err := c.RunWorkflow(ctx, req)
	if err != nil {
		t.Fatalf("the same RunWorkflow once commits work: %v", err)
	}
	if k := kinds(collect(t, c, again.Handler.HandlerId, 0)); k != "1:echo started 2:echo ended 3:COMPLETED" {
		t.Fatalf("stream of the handler started again: %s", k)
	}
	if k := kinds(collect(t, c, finished.HandlerId, 0)); k != finishedStream {
		t.Fatalf("stream of a handler finished before the outage: %s, was %s", k, finishedStream)
	}
	if _, err := sendEv(t, c, waiting.HandlerId, "approval", map[string]any{"approved": true}); err != nil {
		t.Fatalf("SendEvent to a handler waiting since before the outage: %v", err)
	}
	if k := kinds(collect(t, c, waiting.HandlerId, 0)); !strings.HasSuffix(k, "COMPLETED") {
		t.Fatalf("stream of the waiting handler: %s", k)
	}
}
