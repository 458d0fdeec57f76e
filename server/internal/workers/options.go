package workers

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/live"
)

// Options configure a Registry. The server fills in its defaults before.
type Options struct {
	// Store keeps the worker-registered definitions (and, in replica
	// mode, the worker routes). Required.
	Store  persistence.Store
	Logger *slog.Logger
	Now    func() time.Time
	// Heartbeat is how often a connected worker's stream is sent a
	// heartbeat when it is sent nothing else.
	Heartbeat time.Duration
	// MaxMessageBytes bounds a request message; StepCall and FinishRun
	// may carry more (runMessageBytes).
	MaxMessageBytes int
	// WorkerGrants let other subjects than a workflow's owner serve it,
	// by workflow name.
	WorkerGrants map[string][]string
	// Draining is closed when the server's shutdown begins: nothing is
	// dispatched any more, and Connect streams end.
	Draining <-chan struct{}
	// DispatchSeconds is the dispatch latency histogram.
	DispatchSeconds prometheus.Histogram
	// Replica is what replica mode gives the workers (nil: one process).
	Replica Replica
	// RunLinger is the Linger of the steps workers run (flow.Step.Linger;
	// 0: the engine's).
	RunLinger time.Duration
}

// Replica is what the workers need of replica mode.
type Replica interface {
	// ID is this replica's id, under which it advertises what its
	// workers serve.
	ID() string
	// LeaseTTL bounds how long a write of the worker routes may take.
	LeaseTTL() time.Duration
	// ReleaseNow frees handler id's lease, if held, before it returns, so
	// that the replica its work goes to finds it free.
	ReleaseNow(ctx context.Context, id string)
	// Forwarded reports whether the call being handled in ctx was
	// forwarded by another replica.
	Forwarded(ctx context.Context) bool
}

// New builds a registry with no worker connected. In replica mode, with
// a store that keeps worker routes, work is routed to the replicas whose
// workers serve it. Attach must be called before it is used.
func New(opts Options) *Registry {
	r := &Registry{opts: opts, log: opts.Logger, db: opts.Store, replica: opts.Replica,
		workers: map[string]*worker{}, defs: map[string]map[string]string{},
		runs: map[string]*remoteRun{}, waiting: map[string]map[*waitingRun]struct{}{}, changed: make(chan struct{}),
		advDirty: true, routeKick: make(chan struct{}, 1)}
	r.stats.seconds = opts.DispatchSeconds
	if opts.Replica != nil {
		r.routes, _ = opts.Store.(persistence.WorkerRoutes)
	}
	return r
}

// Attach gives the registry the runtime whose engine runs the workers'
// workflows (the runtime is built with the registry as its live.Workers,
// so after both are).
func (r *Registry) Attach(rt *live.Runtime) {
	r.rt, r.eng = rt, rt.Engine()
}

var _ live.Workers = (*Registry)(nil)

// draining reports whether the server's shutdown has begun.
func (r *Registry) draining() bool {
	select {
	case <-r.opts.Draining:
		return true
	default:
		return false
	}
}
