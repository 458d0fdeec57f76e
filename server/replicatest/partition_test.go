package replicatest_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestReplicaPartitionedDropsHandlers: a replica whose database stops
// answering (a partition: its packets are dropped, nothing is refused)
// cannot renew; it drops its handlers from memory before their leases can
// have expired, and another replica takes them over once they have.
func TestReplicaPartitionedDropsHandlers(t *testing.T) {
	direct := pgURL(t)
	p := startProxy(t, direct)
	var logs testlog.Buffer
	a := startReplicaOpts(t, p.url, "a", 900*time.Millisecond, true, slog.New(slog.NewTextHandler(&logs, nil)))
	b := startReplica(t, direct, "b", time.Minute)
	ctx := context.Background()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	refusedFor(t, b.incHere("h1"), a)

	p.blackhole()
	// a cannot be asked (its GetStats reads the store): its log says.
	testwait.For(t, "a drops h1", func() bool {
		return strings.Contains(logs.String(), `msg="leases not renewed for half their ttl; their handlers left memory" replica=a handlers=1`)
	})
	testwait.Until(t, func() error { return b.inc("h1") })
	if o := b.owner(t, "h1"); o != "b" {
		t.Fatalf("owner = %q, want b", o)
	}
	p.close() // a's shutdown fails fast instead of waiting for answers
}

// pgURL is a fresh database's URL.
func pgURL(t *testing.T) string {
	t.Helper()
	return pgtest.NewDatabase(t)
}
