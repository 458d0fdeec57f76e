package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
)

var workerRouteTests = []replicaTest{
	{"WorkflowRoutes", testWorkflowRoutes},
	{"StrandedHandlers", testStrandedHandlers},
}

// routes lists the live routes as "replica@address:workflow/hash".
func routes(t *testing.T, s router) []string {
	t.Helper()
	rs, err := s.WorkflowRoutes(t.Context())
	if err != nil {
		t.Fatalf("WorkflowRoutes: %v", err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s@%s:%s/%s", r.Replica, r.Address, r.Workflow, r.Hash))
	}
	return out
}

// advertise advertises what replica serves: workflow, hash, workflow,
// hash...
func advertise(t *testing.T, s router, replica string, served ...string) {
	t.Helper()
	var ws []persistence.ServedWorkflow
	for i := 0; i < len(served); i += 2 {
		ws = append(ws, persistence.ServedWorkflow{Workflow: served[i], Hash: served[i+1]})
	}
	if err := s.AdvertiseWorkflows(t.Context(), replica, ws); err != nil {
		t.Fatalf("AdvertiseWorkflows(%s, %v): %v", replica, served, err)
	}
}

// checkRoutes fails the test (what: after what) unless s lists want.
func checkRoutes(t *testing.T, s router, what string, want ...string) {
	t.Helper()
	if got := routes(t, s); !slices.Equal(got, want) {
		t.Fatalf("routes %s = %v, want %v", what, got, want)
	}
}

// testWorkflowRoutes: an advertisement replaces the replica's previous
// one, is ignored once its registration expired, goes with Leave, and is
// not kept for a replica that is not registered.
func testWorkflowRoutes(t *testing.T, replicas ReplicasFunc) {
	rs := openReplicas[router](t, replicas, 2)
	a, b := rs[0], rs[1]
	heartbeat(t, a, "A", "A:1", longTTL)
	heartbeat(t, b, "B", "B:1", longTTL)
	advertise(t, a, "A", "w1", "h1", "w2", "h2")
	advertise(t, b, "B", "w1", "h1")
	advertise(t, b, "ghost", "w1", "h1") // not registered: nothing kept
	checkRoutes(t, a, "after the first advertisements", "A@A:1:w1/h1", "A@A:1:w2/h2", "B@B:1:w1/h1")
	// A replacement: w1 goes, w2 stays, w3 comes.
	advertise(t, a, "A", "w2", "h2", "w3", "h3")
	checkRoutes(t, b, "after A's second advertisement", "A@A:1:w2/h2", "A@A:1:w3/h3", "B@B:1:w1/h1")
	advertise(t, b, "B") // nothing served
	checkRoutes(t, b, "after B serves nothing", "A@A:1:w2/h2", "A@A:1:w3/h3")

	// An expired registration's advertisement is ignored; a renewed one
	// counts again.
	advertise(t, b, "B", "w1", "h1")
	heartbeat(t, b, "B", "B:1", shortTTL)
	testwait.For(t, "B's registration to expire", func() bool {
		return slices.Equal(routes(t, a), []string{"A@A:1:w2/h2", "A@A:1:w3/h3"})
	})
	heartbeat(t, b, "B", "B:2", longTTL)
	checkRoutes(t, a, "after B renewed", "A@A:1:w2/h2", "A@A:1:w3/h3", "B@B:2:w1/h1")

	// Leave takes the advertisement with the registration: registered
	// again, A serves nothing until it advertises.
	if err := a.Leave(t.Context(), "A"); err != nil {
		t.Fatal(err)
	}
	heartbeat(t, a, "A", "A:1", longTTL)
	checkRoutes(t, b, "after A left and came back", "B@B:2:w1/h1")
}

// testStrandedHandlers: busy running handlers in memory by their
// residency whose lease is not live (never taken, released, expired) are
// stranded; idle, released, finished ones and those with a live lease,
// or of other workflows, are not.
func testStrandedHandlers(t *testing.T, replicas ReplicasFunc) {
	s := openReplicas[router](t, replicas, 1)[0]
	busy := func(id, workflow string) persistence.Handler {
		h := leasedHandler(id)
		h.Workflow, h.Residency, h.IdleSince, h.Waiters = workflow, persistence.ResidencyActive, time.Time{}, nil
		return h
	}
	idle := busy("idle", "w")
	idle.IdleSince = idle.CreatedAt
	released := busy("released", "w")
	released.Residency = persistence.ResidencyReleased
	done := busy("done", "w")
	done.Status, done.CompletedAt = persistence.StatusCompleted, done.CreatedAt
	writeHandlers(t, s, busy("free", "w"), busy("held", "w"), busy("let-go", "w"), busy("expired", "w"), busy("other", "v"), busy("third", "x"),
		idle, released, done)
	acquire(t, s, "held", "A", longTTL)
	release(t, s, acquire(t, s, "let-go", "A", longTTL))
	acquire(t, s, "expired", "A", shortTTL)
	stranded := func(workflows []string, limit int) []string {
		ids, err := s.StrandedHandlers(t.Context(), workflows, limit)
		if err != nil {
			t.Fatalf("StrandedHandlers: %v", err)
		}
		return ids
	}
	testwait.For(t, "the short lease to expire", func() bool {
		return slices.Equal(stranded([]string{"w", "v"}, 10), []string{"expired", "free", "let-go", "other"})
	})
	if got := stranded([]string{"w"}, 2); !slices.Equal(got, []string{"expired", "free"}) {
		t.Fatalf("StrandedHandlers(w, 2) = %v", got)
	}
	if got := stranded(nil, 10); len(got) != 0 {
		t.Fatalf("StrandedHandlers(none) = %v", got)
	}
}
