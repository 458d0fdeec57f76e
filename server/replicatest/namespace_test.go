package replicatest_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/namespace"
	"github.com/wfd-dev/wfd/persistence/postgres"
	"github.com/wfd-dev/wfd/server"
)

// inAcme is a call context naming namespace acme.
func inAcme() context.Context {
	ctx, info := connect.NewClientContext(context.Background())
	info.RequestHeader().Set(namespace.Header, "acme")
	return ctx
}

// withAcme serves namespace acme on schema wfd_ns_acme of url, shared as
// the default namespace's store is.
func withAcme(t *testing.T, url string, ttl time.Duration) func(*server.Options) {
	return func(o *server.Options) {
		store, err := postgres.Open(context.Background(), url, postgres.Options{Shared: true, SessionTimeout: server.SessionTimeout(ttl), Schema: "wfd_ns_acme"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		o.Namespaces = []server.Namespace{{Name: "acme", Store: store}}
	}
}

// TestReplicaNamespace: replicas serve a namespace on a schema of their
// database; a call in it through a replica that does not own the handler
// is forwarded in the same namespace, and the same id in the default
// namespace is another handler with another owner.
func TestReplicaNamespace(t *testing.T) {
	url := pgtest.NewDatabase(t)
	const ttl = 30 * time.Second
	a := startReplicaWith(t, url, "a", ttl, false, withAcme(t, url, ttl))
	b := startReplicaWith(t, url, "b", ttl, false, withAcme(t, url, ttl))
	if _, err := a.c.RunWorkflow(inAcme(), &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.RunWorkflow(context.Background(), &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	inc := &wfdv1.SendEventRequest{HandlerId: "h1", Event: &wfdv1.Event{Type: "inc", Data: &structpb.Struct{}}}
	var res *wfdv1.SendEventResponse
	for i := range 3 {
		testwait.Until(t, func() error {
			var err error
			res, err = b.c.SendEvent(inAcme(), inc)
			if connect.CodeOf(err) == connect.CodeUnavailable {
				return err
			}
			if err != nil {
				t.Fatalf("inc %d in acme through b: %v", i, err)
			}
			return nil
		})
	}
	if h := res.GetHandler(); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_COMPLETED || h.GetOwner() != "" && h.GetOwner() != "a" {
		t.Fatalf("acme's h1 after three incs through b = %v, want completed (by a)", h)
	}
	if h := handlerOn(t, a, "h1"); h.GetStatus() != wfdv1.HandlerStatus_HANDLER_STATUS_RUNNING || h.GetOwner() != "b" {
		t.Fatalf("default's h1 = %v, want running on b", h)
	}
	// Each namespace has its own registration of the replicas.
	reps, err := b.c.ListReplicas(inAcme(), &wfdv1.ListReplicasRequest{})
	if err != nil || len(reps.GetReplicas()) != 2 {
		t.Fatalf("ListReplicas in acme = %v, %v; want a and b", reps.GetReplicas(), err)
	}
}
