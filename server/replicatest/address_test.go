package replicatest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// TestReplicaOwnerAddressOutlivesRegistration: a replica's registration
// can expire a moment before leases it took after its last heartbeat (a
// paused or dying replica). A call for such a handler elsewhere still
// names, and is forwarded to, the address the owner advertised, not "no
// address advertised".
func TestReplicaOwnerAddressOutlivesRegistration(t *testing.T) {
	url := pgURL(t)
	ctx := context.Background()
	z, err := postgres.Open(ctx, url, postgres.Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = z.Close() }()
	// z: a replica that registered, took h's lease for long, and is gone.
	if _, err := z.Heartbeat(ctx, "z", "127.0.0.1:1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := z.Acquire(ctx, "h", "z", time.Hour); err != nil || !ok {
		t.Fatalf("Acquire: %v, %v", ok, err)
	}
	b := startReplica(t, url, "b", 600*time.Millisecond)
	refused := func() string {
		err := b.inc("h")
		if err == nil {
			t.Fatal("inc of a handler z holds succeeded on b")
		}
		return err.Error()
	}
	if msg := refused(); strings.Contains(msg, "no address advertised") {
		t.Fatalf("while z is registered: %s", msg)
	}
	// z's registration runs out; its lease of h does not. b renews (and
	// reads the registry) every 200 ms meanwhile.
	if _, err := z.Heartbeat(ctx, "z", "127.0.0.1:1", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "z's registration to expire", func() bool {
		rs, err := z.Replicas(ctx)
		if err != nil {
			return false
		}
		for _, r := range rs {
			if r.ID == "z" {
				return false
			}
		}
		return true
	})
	// b's heartbeat (which a renewal's registry read follows) moves its
	// registration's expiry: twice, and b has read the registry since.
	beat := func() time.Time {
		rs, _ := z.Replicas(ctx)
		for _, r := range rs {
			if r.ID == "b" {
				return r.Expires
			}
		}
		return time.Time{}
	}
	for range 2 {
		before := beat()
		testwait.For(t, "b to renew", func() bool { return beat().After(before) })
	}
	if msg := refused(); strings.Contains(msg, "no address advertised") {
		t.Fatalf("after z's registration expired: %s", msg)
	}
}
