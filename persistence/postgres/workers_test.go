package postgres_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// routes lists the live routes as "replica@address:workflow/hash".
func routes(t *testing.T, s *postgres.Store) []string {
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

func advertise(t *testing.T, s *postgres.Store, replica string, served ...string) {
	t.Helper()
	var ws []persistence.ServedWorkflow
	for i := 0; i < len(served); i += 2 {
		ws = append(ws, persistence.ServedWorkflow{Workflow: served[i], Hash: served[i+1]})
	}
	if err := s.AdvertiseWorkflows(t.Context(), replica, ws); err != nil {
		t.Fatalf("AdvertiseWorkflows(%s, %v): %v", replica, served, err)
	}
}

// TestWorkflowRoutes: an advertisement replaces the replica's previous
// one, is ignored once its registration expired, goes with Leave, and is
// not kept for a replica that is not registered.
func TestWorkflowRoutes(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})
	for _, r := range []struct {
		s  *postgres.Store
		id string
	}{{a, "A"}, {b, "B"}} {
		if _, err := r.s.Heartbeat(ctx, r.id, r.id+":1", longTTL); err != nil {
			t.Fatal(err)
		}
	}
	advertise(t, a, "A", "w1", "h1", "w2", "h2")
	advertise(t, b, "B", "w1", "h1")
	advertise(t, b, "ghost", "w1", "h1") // not registered: nothing kept
	if got, want := routes(t, a), []string{"A@A:1:w1/h1", "A@A:1:w2/h2", "B@B:1:w1/h1"}; !slices.Equal(got, want) {
		t.Fatalf("routes = %v, want %v", got, want)
	}
	// A replacement: w1 goes, w2 stays, w3 comes.
	advertise(t, a, "A", "w2", "h2", "w3", "h3")
	if got, want := routes(t, b), []string{"A@A:1:w2/h2", "A@A:1:w3/h3", "B@B:1:w1/h1"}; !slices.Equal(got, want) {
		t.Fatalf("routes after A's second advertisement = %v, want %v", got, want)
	}
	// Nothing served.
	advertise(t, b, "B")
	if got, want := routes(t, b), []string{"A@A:1:w2/h2", "A@A:1:w3/h3"}; !slices.Equal(got, want) {
		t.Fatalf("routes after B serves nothing = %v, want %v", got, want)
	}
	// An expired registration's advertisement is ignored; a renewed one
	// counts again.
	advertise(t, b, "B", "w1", "h1")
	if _, err := b.Heartbeat(ctx, "B", "B:1", shortTTL); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "B's registration to expire", func() bool {
		return slices.Equal(routes(t, a), []string{"A@A:1:w2/h2", "A@A:1:w3/h3"})
	})
	if _, err := b.Heartbeat(ctx, "B", "B:2", longTTL); err != nil {
		t.Fatal(err)
	}
	if got, want := routes(t, a), []string{"A@A:1:w2/h2", "A@A:1:w3/h3", "B@B:2:w1/h1"}; !slices.Equal(got, want) {
		t.Fatalf("routes after B renewed = %v, want %v", got, want)
	}
	// Leave takes the advertisement with the registration: registered
	// again, A serves nothing until it advertises.
	if err := a.Leave(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Heartbeat(ctx, "A", "A:1", longTTL); err != nil {
		t.Fatal(err)
	}
	if got, want := routes(t, b), []string{"B@B:2:w1/h1"}; !slices.Equal(got, want) {
		t.Fatalf("routes after A left and came back = %v, want %v", got, want)
	}
}

// TestStrandedHandlers: busy running handlers in memory by their
// residency whose lease is not live (never taken, released, expired) are
// stranded; idle, released, finished ones and those with a live lease,
// or of other workflows, are not.
func TestStrandedHandlers(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	s := openShared(t, url, postgres.Options{})
	busy := func(id, workflow string) persistence.Handler {
		h := testHandler(id)
		h.Workflow, h.Residency, h.IdleSince, h.Waiters = workflow, persistence.ResidencyActive, time.Time{}, nil
		return h
	}
	idle := busy("idle", "w")
	idle.IdleSince = idle.CreatedAt
	released := busy("released", "w")
	released.Residency = persistence.ResidencyReleased
	done := busy("done", "w")
	done.Status, done.CompletedAt = persistence.StatusCompleted, done.CreatedAt
	var changes []persistence.Change
	for _, h := range []persistence.Handler{
		busy("free", "w"), busy("held", "w"), busy("let-go", "w"), busy("expired", "w"), busy("other", "v"), busy("third", "x"),
		idle, released, done,
	} {
		changes = append(changes, persistence.Change{Handler: h})
	}
	if err := s.Write(ctx, changes...); err != nil {
		t.Fatalf("Write: %v", err)
	}
	mustAcquire(t, s, "held", "A", longTTL)
	l := mustAcquire(t, s, "let-go", "A", longTTL)
	if err := s.Release(ctx, "let-go", l.Fence()); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, s, "expired", "A", shortTTL)
	stranded := func(workflows []string, limit int) []string {
		ids, err := s.StrandedHandlers(ctx, workflows, limit)
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
