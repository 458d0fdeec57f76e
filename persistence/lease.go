package persistence

import (
	"context"
	"fmt"
	"time"
)

// Leaser is the handler ownership of several replicas on one database: a
// replica registry and one lease per handler, with a fencing token that
// Change.Fence checks. Every expiry is measured by the database's clock,
// never a replica's, so clock skew between replicas cannot make two
// owners. The PostgreSQL store implements it; bbolt (one process) does
// not.
type Leaser interface {
	// Heartbeat registers replica id at address, or renews its
	// registration: it is live until ttl from now.
	Heartbeat(ctx context.Context, id, address string, ttl time.Duration) (Replica, error)
	// Replicas lists the live replicas, by id.
	Replicas(ctx context.Context) ([]Replica, error)
	// Leave ends replica id's registration and releases every lease it
	// holds, in one transaction (a replica shutting down hands its
	// handlers over at once rather than after their leases expire).
	Leave(ctx context.Context, id string) error
	// Acquire takes handler's lease for replica for ttl if it is free
	// (never taken, or released), expired, or already replica's, with a
	// new fencing token greater than every earlier one of the handler.
	// When another replica holds it, acquired is false and the Lease is
	// the holder's. Among concurrent acquirers exactly one succeeds.
	Acquire(ctx context.Context, handler, replica string, ttl time.Duration) (lease Lease, acquired bool, err error)
	// AcquireMany is Acquire of several handlers in one statement: it
	// returns the leases it acquired and the live leases other replicas
	// hold, each in handler order. A handler in neither was taken by
	// another replica in the instant between the two (Lease says by
	// whom). Duplicates in handlers are ignored. Handlers held elsewhere
	// cost no write: a call for a handler live on another replica asks
	// the database nothing it must commit.
	AcquireMany(ctx context.Context, handlers []string, replica string, ttl time.Duration) (acquired, elsewhere []Lease, err error)
	// Renew extends, in one statement, to ttl from now, every lease of
	// held that replica still holds with that token and that has not
	// expired, and returns the handlers of held it lost: taken by another
	// replica, released, or expired (an expired lease is lost to its
	// holder even if nobody took it yet: it commits nothing under it, and
	// acquires the handler again if it still wants it). Every fence of
	// held names its handler, and replica or no replica.
	Renew(ctx context.Context, replica string, held []Fence, ttl time.Duration) (lost []string, err error)
	// Release frees handler's lease if fence still holds it (else
	// ErrFenced); the next Acquire, by any replica, succeeds at once.
	Release(ctx context.Context, handler string, fence Fence) error
	// Lease returns handler's lease (ErrNotFound if it never had one).
	Lease(ctx context.Context, handler string) (Lease, error)
	// Owners returns the live owner of each of ids whose lease is held
	// (ids without a live lease are absent), in one query.
	Owners(ctx context.Context, ids []string) (map[string]string, error)

	Claimer
}

// Claimer hands work no replica holds to one replica at a time. Each claim
// is one transaction that picks its handlers, skipping those a concurrent
// claim is picking (FOR UPDATE SKIP LOCKED: claims never wait for each
// other and never pick the same handler), and acquires their leases for
// replica as Acquire does (a new, greater token; free, released or expired
// leases only, or none yet), returning the leases it acquired.
type Claimer interface {
	// ClaimDue claims up to limit handlers with a timer due at or before
	// before, the earliest due first, whose lease is not live.
	ClaimDue(ctx context.Context, replica string, before time.Time, limit int, ttl time.Duration) ([]Lease, error)
	// ClaimOrphans claims up to limit running handlers that some replica
	// had in memory (ResidencyActive) and that no replica holds now: their
	// lease is released or expired, or they never had one. A live lease,
	// or an expired one of replica itself (whose own start-up recovers
	// them), is left alone.
	ClaimOrphans(ctx context.Context, replica string, limit int, ttl time.Duration) ([]Lease, error)
}

// Fence is a replica's claim to write a handler: the token of the lease
// it acquired. The zero Fence is no claim.
type Fence struct {
	Replica string
	Token   uint64
	// Handler names the handler: required by Leaser.Renew; optional in
	// Change.Fence, where, if set, it must be the change's handler.
	Handler string
}

// IsZero reports whether f is no claim.
func (f Fence) IsZero() bool { return f.Token == 0 && f.Replica == "" }

func (f Fence) validate(handler string) error {
	switch {
	case f.Token == 0 || f.Replica == "":
		return fmt.Errorf("%w: handler %q: a fence needs a replica and a token", ErrInvalid, handler)
	case f.Handler != "" && f.Handler != handler:
		return fmt.Errorf("%w: handler %q: the fence is handler %q's", ErrInvalid, handler, f.Handler)
	}
	return nil
}

// Lease is a handler's lease as the database has it.
type Lease struct {
	Handler string
	// Owner is the replica holding it; "" once released.
	Owner string
	// Token grows with every Acquire of the handler.
	Token    uint64
	Acquired time.Time
	Expires  time.Time
	// Live: Owner is set and Expires is after the database's now.
	Live bool
	// Left is how long the lease had left when it was read, by the
	// database's clock (negative once expired): with the reader's own
	// clock, it says until when the holder may keep it without a renewal
	// whatever the two clocks read.
	Left time.Duration
}

// Fence returns the claim of the lease's owner.
func (l Lease) Fence() Fence { return Fence{Replica: l.Owner, Token: l.Token, Handler: l.Handler} }

// Replica is a registered replica.
type Replica struct {
	ID      string
	Address string
	Started time.Time
	Expires time.Time
	// Live: Expires is after the database's now.
	Live bool
}
