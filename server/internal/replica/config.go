package replica

import "time"

// DefaultLeaseTTL is a replica's registration and handler lease time when
// Config.LeaseTTL is 0: a replica killed without leaving has its handlers
// taken over by others after at most this long.
const DefaultLeaseTTL = 10 * time.Second

// Config configures replica mode (server.Replica). The zero Config (no
// ID) is a single process: no leases, no registry.
type Config struct {
	// ID names this replica in the registry and in leases; unique among
	// the replicas sharing the database.
	ID string
	// Address is the host:port clients can reach this replica at; it is
	// what a call refused elsewhere names (ListReplicas shows it).
	Address string
	// LeaseTTL is how long a registration and a handler lease last
	// without renewal (default DefaultLeaseTTL); they are renewed every
	// third of it.
	LeaseTTL time.Duration
}

// SessionTimeout is how long a replica with lease time ttl lets a
// database session hold a lock or an open transaction, or wait for a
// lock (postgres.Options.SessionTimeout): half the ttl, so a replica that
// is paused or cut off mid-transaction has lost the transaction and its
// row locks before its leases expire and others take its handlers over;
// but at least a second, below which a busy database would fail ordinary
// statements (with a ttl under 2 s the locks may outlast the leases by
// that much).
func SessionTimeout(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	return max(ttl/2, time.Second)
}
