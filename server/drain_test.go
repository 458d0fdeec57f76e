package server_test

import (
	"context"
	"net"
	"testing"
	"time"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/server"
)

// TestDrainInFlight holds a RunWorkflow call in its commit (the store's
// Write waits) while the server shuts down:
//
//   - committed within the grace period, the call answers its true result
//     (the handler) and the handler is in the store: shutdown does not
//     cancel calls in flight;
//   - still in flight when the grace period ends, it answers Unavailable
//     (retry with the same handler id), never Canceled.
//
// Either way a health Watch sees NOT_SERVING as soon as shutdown begins and
// then ends with Unavailable.
func TestDrainInFlight(t *testing.T) {
	for _, tc := range []struct {
		name          string
		grace         time.Duration
		commitInGrace bool
	}{
		{"committed within the grace period", time.Minute, true},
		{"grace period ends first", 200 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			held := newHeldStore(t)
			real, store := held.real, held.store
			srv, err := server.New(ctx, server.Options{Store: store, Workflows: testWorkflows()})
			if err != nil {
				t.Fatal(err)
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			sctx, shutdown := context.WithCancel(context.Background())
			defer shutdown()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(sctx, l, tc.grace) }()
			url := "http://" + l.Addr().String()
			hc := h2cClient()
			watch, err := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](hc, url+"/grpc.health.v1.Health/Watch", connect.WithGRPC()).
				CallServerStream(ctx, connect.NewRequest(&healthpb.HealthCheckRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = watch.Close() }()
			if !watch.Receive() || watch.Msg().GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("Watch: %v %v", watch.Msg(), watch.Err())
			}

			held.hold.Store(true)
			c := wfdv1connect.NewWorkflowServiceClient(hc, url, connect.WithGRPC())
			answered := make(chan error, 1)
			go func() {
				_, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "echo", HandlerId: "in-flight"})
				answered <- err
			}()
			<-held.entered // the call waits for its commit
			shutdown()
			if !watch.Receive() || watch.Msg().GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
				t.Fatalf("Watch after shutdown began: %v %v", watch.Msg(), watch.Err())
			}
			if watch.Receive() {
				t.Fatalf("Watch after NOT_SERVING: %v", watch.Msg())
			}
			wantCode(t, watch.Err(), connect.CodeUnavailable, "shutting down")

			if tc.commitInGrace {
				held.hold.Store(false)
				close(held.release)
				if err := <-answered; err != nil {
					t.Fatalf("RunWorkflow in flight at shutdown: %v, want its handler", err)
				}
			} else {
				wantCode(t, <-answered, connect.CodeUnavailable, "retry")
				held.hold.Store(false)
				close(held.release)
			}
			if err := <-served; err != nil {
				t.Fatalf("Serve: %v", err)
			}
			_, err = real.GetHandler(ctx, "in-flight")
			if tc.commitInGrace && err != nil {
				t.Fatalf("the acknowledged handler is not in the store: %v", err)
			}
		})
	}
}
