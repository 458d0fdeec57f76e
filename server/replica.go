package server

import (
	"time"

	"github.com/wfd-dev/wfd/server/internal/replica"
)

// Replica mode lives in internal/replica; these are its public names.

// DefaultLeaseTTL is a replica's registration and handler lease time when
// Replica.LeaseTTL is 0: a replica killed without leaving has its handlers
// taken over by others after at most this long.
const DefaultLeaseTTL = replica.DefaultLeaseTTL

// Replica configures replica mode (Options.Replica): ID, the replica's
// name in the registry and in leases; Address, the host:port clients can
// reach it at; LeaseTTL, how long a registration and a handler lease last
// unrenewed (default DefaultLeaseTTL). The zero Replica (no ID) is a
// single process: no leases, no registry.
type Replica = replica.Config

// SessionTimeout is how long a replica with lease time ttl lets a
// database session hold a lock or an open transaction, or wait for a
// lock (postgres.Options.SessionTimeout): half the ttl, so a replica that
// is paused or cut off mid-transaction has lost the transaction and its
// row locks before its leases expire and others take its handlers over;
// but at least a second, below which a busy database would fail ordinary
// statements (with a ttl under 2 s the locks may outlast the leases by
// that much).
func SessionTimeout(ttl time.Duration) time.Duration { return replica.SessionTimeout(ttl) }
