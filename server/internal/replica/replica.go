package replica

// Replica mode (server.Replica): several servers share one database and
// each handler in memory is owned by one of them through its lease
// (persistence.Leaser). A replica acquires a handler's lease before the
// handler enters memory (started, loaded, recovered), fences every change
// the journal commits for it with the lease's token, renews all its
// leases in one statement with its registry heartbeat, drops the handlers
// whose lease it lost, and releases a lease when its handler leaves memory
// (released or finished). A call for a handler another live replica owns
// is refused with an apierr.Owned naming that replica; the forwarder
// forwards the calls that deliver to a handler to it.

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/live"
	"github.com/wfd-dev/wfd/server/internal/observe"
)

// Options are what New builds a replica of.
type Options struct {
	// Config is the server's replica configuration (server.Replica); no
	// ID: a single process, and New returns nil.
	Config Config
	// Store is the server's store: it must take leases
	// (persistence.Leaser); if it reports the commits of every process
	// (commitFeed), streams and waits follow handlers live elsewhere.
	Store  persistence.Store
	Logger *slog.Logger
	// Now is the clock of the log throttling.
	Now func() time.Time
	// TLS says the server speaks TLS: calls are forwarded over TLS, with
	// PeerTLS (nil: not forwarded but refused naming the owner).
	TLS     bool
	PeerTLS func(addr string) (*tls.Config, error)
	// Auth signs the identity of a caller known by its client certificate
	// for the owner of a forwarded call (nil: authentication is off).
	Auth *auth.Authenticator
	// Tracing traces forwarded calls when on.
	Tracing *observe.Tracing
}

// Replica is this server as one of several sharing a database: its
// handler leases (live.Ownership), the interceptor forwarding calls to the
// owner of their handler (connect.Interceptor), the sweep of orphans and
// the feed of the other replicas' commits. A nil *Replica is a single
// process: the methods the server calls do nothing (the runtime is not
// given it as its Ownership, and keeps its single-process default).
type Replica struct {
	log   *slog.Logger
	store persistence.Store
	db    persistence.Leaser
	cfg   Config
	// fwd forwards calls and publications to the owner.
	fwd *forwarder
	// rt is the runtime whose handlers the leases are of (Join).
	rt *live.Runtime

	// batch takes leases for several handlers at once.
	batch *acquirer

	mu   sync.Mutex
	held map[string]persistence.Fence
	// addrs are the live replicas' addresses by id (address).
	addrs map[string]string
	// renewedAt is when the last successful renewal was sent: the leases
	// are known to last until renewedAt + ttl by the database's clock,
	// so this replica's own clock, with a margin, bounds how long it may
	// go on running them without a renewal.
	renewedAt time.Time

	stop context.CancelFunc
	done chan struct{}
}

var _ live.Ownership = (*Replica)(nil)

// New builds the replica of o, nil without a replica id (a single
// process). The runtime is built with it as its live.Ownership; Join
// then gives it that runtime and registers it.
func New(o Options) (*Replica, error) {
	cfg := o.Config
	if cfg.ID == "" {
		return nil, nil
	}
	db, ok := o.Store.(persistence.Leaser)
	if !ok {
		return nil, fmt.Errorf("server: replica mode needs a store with leases (PostgreSQL), not %T", o.Store)
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	r := &Replica{log: o.Logger, store: o.Store, db: db, cfg: cfg, held: map[string]persistence.Fence{}}
	r.batch = &acquirer{r: r}
	var err error
	if r.fwd, err = newForwarder(cfg.ID, o); err != nil {
		return nil, err
	}
	return r, nil
}

// ID is this replica's id ("" for a single process).
func (r *Replica) ID() string {
	if r == nil {
		return ""
	}
	return r.cfg.ID
}

// LeaseTTL is how long this replica's leases last unrenewed (0 for a
// single process).
func (r *Replica) LeaseTTL() time.Duration {
	if r == nil {
		return 0
	}
	return r.cfg.LeaseTTL
}

// Replicas lists the live replicas of the database (none for a single
// process).
func (r *Replica) Replicas(ctx context.Context) ([]persistence.Replica, error) {
	if r == nil {
		return nil, nil
	}
	return r.db.Replicas(ctx)
}

// Join takes rt, the runtime built with this replica as its Ownership,
// registers the replica, starts renewing, and starts following the other
// replicas' commits.
func (r *Replica) Join(ctx context.Context, rt *live.Runtime) error {
	if r == nil {
		return nil
	}
	r.rt = rt
	sent := time.Now()
	if _, err := r.db.Heartbeat(ctx, r.cfg.ID, r.cfg.Address, r.cfg.LeaseTTL); err != nil {
		return fmt.Errorf("server: registering replica %q: %w", r.cfg.ID, err)
	}
	r.mu.Lock()
	r.renewedAt = sent
	r.mu.Unlock()
	// The renewals outlive the background context: they must go on while
	// Close checkpoints the handlers, until the journal's last commit.
	rctx, stop := context.WithCancel(context.Background())
	r.stop, r.done = stop, make(chan struct{})
	go r.run(rctx)
	r.log.Info("replica mode", "replica", r.cfg.ID, "advertise", r.cfg.Address, "lease_ttl", r.cfg.LeaseTTL)
	r.followCommits()
	return nil
}

// Leave stops renewing, ends the registration and frees every lease
// still held (once the journal has committed its last change), and drops
// the idle connections to other replicas.
func (r *Replica) Leave(ctx context.Context) error {
	if r == nil {
		return nil
	}
	defer r.fwd.close()
	if r.stop == nil {
		return nil
	}
	r.stop()
	<-r.done
	// Past a ttl the leases have expired anyway.
	ctx, cancel := context.WithTimeout(ctx, r.cfg.LeaseTTL)
	defer cancel()
	if err := r.db.Leave(ctx, r.cfg.ID); err != nil {
		return fmt.Errorf("server: leaving as replica %q: %w", r.cfg.ID, err)
	}
	return nil
}

func (r *Replica) run(ctx context.Context) {
	defer close(r.done)
	every(ctx, r.cfg.LeaseTTL/3, func() { r.Renew(ctx) })
}
