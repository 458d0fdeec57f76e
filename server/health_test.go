package server_test

import (
	"net/http/httptest"
	"path/filepath"
	"testing"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
)

// TestHealth checks grpc.health.v1 as a load balancer sees it: SERVING
// while the server runs, NotFound for a service it does not have, and
// NOT_SERVING once its store is unavailable or it is shutting down.
func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(ts *testServer) // nil: a healthy server
		want  healthpb.HealthCheckResponse_ServingStatus
	}{
		{"running", nil, healthpb.HealthCheckResponse_SERVING},
		{"store unavailable", func(ts *testServer) {
			if err := ts.store.Close(); err != nil {
				t.Fatal(err)
			}
		}, healthpb.HealthCheckResponse_NOT_SERVING},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, serverConfig{workflows: testWorkflows()})
			check := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
				ts.http, "http://"+ts.addr+"/grpc.health.v1.Health/Check", connect.WithGRPC())
			if tc.spoil != nil {
				tc.spoil(ts)
			}
			for _, service := range []string{"", wfdv1connect.WorkflowServiceName} {
				res, err := check.CallUnary(ctxT(t), connect.NewRequest(&healthpb.HealthCheckRequest{Service: service}))
				if err != nil {
					t.Fatalf("Check(%q): %v", service, err)
				}
				if got := res.Msg.GetStatus(); got != tc.want {
					t.Errorf("Check(%q) = %v, want %v", service, got, tc.want)
				}
			}
			_, err := check.CallUnary(ctxT(t), connect.NewRequest(&healthpb.HealthCheckRequest{Service: "no.such.Service"}))
			wantCode(t, err, connect.CodeNotFound, "")
		})
	}
}

// TestHealthAfterClose serves Server.Handler from an http.Server of the
// embedder's (which, unlike Serve's, does not end calls when the server
// closes): once the server is closed, checks say NOT_SERVING.
func TestHealthAfterClose(t *testing.T) {
	store, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv, err := server.New(ctxT(t), server.Options{Store: store, Workflows: testWorkflows()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	check := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
		hs.Client(), hs.URL+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	status := func() healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		res, err := check.CallUnary(ctxT(t), connect.NewRequest(&healthpb.HealthCheckRequest{}))
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		return res.Msg.GetStatus()
	}
	if got := status(); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("before Close: %v", got)
	}
	if err := srv.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("after Close: %v, want NOT_SERVING", got)
	}
}
