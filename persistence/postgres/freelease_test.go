package postgres_test

import (
	"errors"
	"testing"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestFreeLeaseInWrite: a fenced change with FreeLease frees the lease in
// its own commit: the next replica acquires it at once, with a greater
// token, and the old fence writes nothing more. A refused Write frees
// nothing, and FreeLease without a fence is invalid.
func TestFreeLeaseInWrite(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openShared(t, url, postgres.Options{}), openShared(t, url, postgres.Options{})
	la := mustAcquire(t, a, "h", "A", longTTL)
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence()}); err != nil {
		t.Fatal(err)
	}
	// Refused (it creates a handler that exists): the lease stays A's.
	err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Create: true, Fence: la.Fence(), FreeLease: true})
	if !errors.Is(err, persistence.ErrExists) {
		t.Fatalf("refused Write: %v, want ErrExists", err)
	}
	if l, err := a.Lease(ctx, "h"); err != nil || l.Owner != "A" || !l.Live {
		t.Fatalf("lease after a refused Write = %+v, %v; want A's, live", l, err)
	}
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Fence: la.Fence(), FreeLease: true}); err != nil {
		t.Fatalf("Write freeing the lease: %v", err)
	}
	if l, err := a.Lease(ctx, "h"); err != nil || l.Owner != "" || l.Live {
		t.Fatalf("lease after the Write = %+v, %v; want freed", l, err)
	}
	lb := mustAcquire(t, b, "h", "B", longTTL)
	if lb.Token <= la.Token {
		t.Fatalf("B's token %d, want above A's %d", lb.Token, la.Token)
	}
	if err := a.Write(ctx, persistence.Change{Handler: owned("h", "A"), Fence: la.Fence()}); !errors.Is(err, persistence.ErrFenced) {
		t.Fatalf("A's Write after freeing: %v, want ErrFenced", err)
	}
	if err := b.Write(ctx, persistence.Change{Handler: owned("h", "B"), FreeLease: true}); !errors.Is(err, persistence.ErrInvalid) {
		t.Fatalf("FreeLease without a fence: %v, want ErrInvalid", err)
	}
}
