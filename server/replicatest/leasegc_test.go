package replicatest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
)

// TestReplicaDeleteDropsLease: deleting a finished handler deletes its
// lease row too; a new handler under the same id takes a lease again
// and runs.
func TestReplicaDeleteDropsLease(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := startReplica(t, url, "a", 30*time.Second)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	leaseRows := func() int {
		t.Helper()
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM wfd_leases WHERE handler_id = 'h1'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := a.inc("h1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := leaseRows(); n != 1 {
		t.Fatalf("%d lease rows of the finished handler, want 1", n)
	}
	if _, err := a.c.DeleteHandler(ctx, &wfdv1.DeleteHandlerRequest{HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	if n := leaseRows(); n != 0 {
		t.Fatalf("%d lease rows after the delete, want 0", n)
	}
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatalf("RunWorkflow with the deleted handler's id: %v", err)
	}
	if err := a.inc("h1"); err != nil {
		t.Fatal(err)
	}
	if o := a.owner(t, "h1"); o != "a" {
		t.Fatalf("owner of the new h1 = %q, want a", o)
	}
}
