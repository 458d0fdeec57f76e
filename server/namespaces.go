package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"connectrpc.com/connect"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/namespace"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"
	"github.com/wfd-dev/wfd/server/internal/replica"
	"github.com/wfd-dev/wfd/server/internal/rpc"
	"github.com/wfd-dev/wfd/server/internal/schedules"
	"github.com/wfd-dev/wfd/server/internal/workers"
)

// Namespace is a namespace the server serves besides the default one
// (Options.Store): a store of its own, so that its handlers, workflows,
// tasks, published events, schedules, concurrency keys and workers share
// nothing with another namespace's.
type Namespace struct {
	// Name passes namespace.Check and is not namespace.Default.
	Name string
	// Store keeps the namespace's handlers. Required; the server does not
	// close it. In replica mode it is shared the same way Options.Store is.
	Store persistence.Store
	// Retention is Options.Retention for this namespace: 0 takes
	// Options.Retention, Off keeps its finished handlers forever.
	Retention time.Duration
}

// space is one namespace's part of the server: its store and everything
// that keeps its handlers live and answers its calls. The spaces share the
// process's limits (streams, connections), its metrics registry, its
// tracing and its health.
type space struct {
	name      string
	store     persistence.Store
	retention time.Duration
	replica   *replica.Replica
	workers   *workers.Registry
	rt        *live.Runtime
	schedules *schedules.Scheduler
	service   *rpc.Service
}

// checkNamespaces refuses namespaces with bad or repeated names or no
// store.
func checkNamespaces(ns []Namespace) error {
	seen := map[string]bool{namespace.Default: true}
	for _, n := range ns {
		if err := namespace.Check(n.Name); err != nil {
			return fmt.Errorf("server: Options.Namespaces: %w", err)
		}
		if seen[n.Name] {
			return fmt.Errorf("server: Options.Namespaces: %q twice (the default namespace is Options.Store)", n.Name)
		}
		seen[n.Name] = true
		if n.Store == nil {
			return fmt.Errorf("server: Options.Namespaces: %q has no Store", n.Name)
		}
	}
	return nil
}

// wireSpace builds the part of the server that serves namespace name on
// store; nothing runs yet.
func (s *Server) wireSpace(name string, store persistence.Store, retention time.Duration) (*space, error) {
	opts := s.opts
	sp := &space{name: name, store: store, retention: retention}
	// The default namespace logs as a server without namespaces does.
	log := opts.Logger
	if name != namespace.Default {
		log = log.With("namespace", name)
	}
	var err error
	sp.replica, err = replica.New(replica.Options{Config: opts.Replica, Store: store, Logger: log, Now: opts.Now,
		TLS: opts.TLSConfig != nil, PeerTLS: opts.PeerTLS, Auth: opts.Auth, Tracing: s.tracing})
	if err != nil {
		return nil, err
	}
	wopts := workers.Options{Store: store, Logger: log, Now: opts.Now, Heartbeat: opts.Heartbeat,
		MaxMessageBytes: opts.MaxMessageBytes, WorkerGrants: opts.WorkerGrants, Draining: s.shutdown.draining,
		DispatchSeconds: s.stats.Hist.Dispatch, RunLinger: opts.WorkerLinger}
	if sp.replica != nil {
		wopts.Replica = sp.replica
	}
	sp.workers = workers.New(wopts)
	ropts := live.Options{Store: store, Workflows: opts.Workflows, Logger: log, Now: opts.Now,
		Engine:      engine.Options{Logger: log, Now: opts.Now, Linger: opts.Linger, CompactIdleAbove: opts.CompactIdleAbove, Limits: opts.Limits},
		IdleTimeout: opts.IdleTimeout, MaxIdleInMemory: opts.MaxIdleInMemory, ReclaimAfter: max(opts.ReclaimAfter, 0),
		Retention: max(retention, 0), RetentionInterval: opts.RetentionInterval, RetentionBatch: opts.RetentionBatch,
		StreamBuffer: s.streams.Limits().BufferBytes, Stats: s.stats, Tracing: s.tracing,
		Workers: sp.workers, Health: s.health}
	if sp.replica != nil {
		ropts.Ownership = sp.replica
	}
	if sp.rt, err = live.New(ropts); err != nil {
		return nil, err
	}
	sp.workers.Attach(sp.rt)
	sp.schedules = schedules.New(schedules.Options{Store: store, Runs: scheduleRuns{rt: sp.rt, workers: sp.workers},
		Logger: log, Now: opts.Now, Poll: opts.SchedulePoll, Stats: s.stats})
	sp.service = rpc.New(rpc.Options{Runtime: sp.rt, Schedules: sp.schedules, Store: store, Logger: log, Now: opts.Now, Heartbeat: opts.Heartbeat,
		Streams: s.streams, Draining: s.shutdown.draining, Workers: sp.workers, Replica: sp.replica,
		AuthOn: opts.Auth != nil, Snapshot: func(ctx context.Context) (snapshot, error) { return s.snapshot(ctx, sp) },
		Namespaces: s.namespacesOf})
	return sp, nil
}

// start joins the replicas (in replica mode), recovers what was running,
// and starts the loops of one namespace.
func (sp *space) start(ctx context.Context, dropped DroppedVersions) error {
	// Joining follows the other replicas' commits, before recovery (see
	// internal/replica's feedResync).
	if err := sp.replica.Join(ctx, sp.rt); err != nil {
		return err
	}
	// Stored worker definitions first: their handlers are recovered too.
	if err := sp.workers.LoadStored(ctx); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if err := sp.rt.CheckDropped(ctx, dropped); err != nil {
		return err
	}
	if err := sp.rt.Recover(ctx); err != nil {
		return err
	}
	if err := sp.rt.RecheckWaitingParents(ctx); err != nil {
		return fmt.Errorf("server: checking on waiting parents: %w", err)
	}
	sp.rt.Run()
	sp.rt.Go(func() { sp.workers.RouteLoop(sp.rt.Background()) })
	sp.rt.Go(func() { sp.schedules.Loop(sp.rt.Background()) })
	sp.replica.Sweep()
	return nil
}

// close stops the namespace's engine (letting runs in progress finish
// until ctx is done), waits for its last commit and leaves the replicas.
func (sp *space) close(ctx context.Context) error {
	rerr := sp.rt.Close(ctx)
	// Every change is committed: the handlers are handed over (or, if the
	// database does not answer, their leases expire).
	lerr := sp.replica.Leave(context.Background())
	return errors.Join(rerr, lerr)
}

// mount serves the namespace's API (WorkflowService and WorkerService)
// on a mux of its own.
func (sp *space) mount(svcOpts []connect.HandlerOption) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(wfdv1connect.NewWorkflowServiceHandler(sp.service, append(slices.Clip(svcOpts), connect.WithInterceptors(sp.replica))...))
	sp.workers.Mount(mux, svcOpts)
	return mux
}

// byNamespace routes each call of the API to its namespace's mux. A call
// naming a namespace not served here goes to the default namespace's,
// where namespaceGate refuses it: the refusal is then written in the
// call's own protocol, after authentication and authorization have had
// their say (so a caller without a role there learns nothing of it).
func (s *Server) byNamespace(muxes map[string]*http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux, ok := muxes[namespace.Of(r.Header.Get(namespace.Header))]
		if !ok {
			mux = muxes[namespace.Default]
		}
		mux.ServeHTTP(w, r)
	})
}

// namespaceGate refuses a call that names a namespace this server does
// not serve (NotFound) or a name no namespace can have (InvalidArgument).
// It runs after the authorizer, which refuses a caller without a role in
// the namespace whether or not the namespace exists. GetIdentity and
// ListNamespaces, which are about the caller and the server, pass.
type namespaceGate struct{ s *Server }

func (g namespaceGate) check(procedure, header string) error {
	switch procedure {
	case wfdv1connect.WorkflowServiceGetIdentityProcedure, wfdv1connect.WorkflowServiceListNamespacesProcedure:
		return nil
	}
	ns := namespace.Of(header)
	if err := namespace.Check(ns); err != nil {
		return fmt.Errorf("%w: %s header: %w", apierr.ErrInvalid, namespace.Header, err)
	}
	if g.s.spaces[ns] == nil {
		return fmt.Errorf("%w: namespace %q is not served here (wfd serve --namespace)", apierr.ErrNotFound, ns)
	}
	return nil
}

func (g namespaceGate) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if err := g.check(req.Spec().Procedure, req.Header().Get(namespace.Header)); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (g namespaceGate) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (g namespaceGate) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if err := g.check(conn.Spec().Procedure, conn.RequestHeader().Get(namespace.Header)); err != nil {
			return err
		}
		return next(ctx, conn)
	}
}

// namespacesOf lists the namespaces served here, by name, each with the
// roles the caller holds there (roles nil when authentication is off),
// leaving out those where it holds none.
func (s *Server) namespacesOf(ctx context.Context, id *auth.Identity) []rpc.NamespaceInfo {
	var out []rpc.NamespaceInfo
	for _, name := range s.order {
		sp := s.spaces[name]
		info := rpc.NamespaceInfo{Name: name, Retention: sp.retention}
		if id != nil {
			info.Roles = id.In(name).Roles
			if len(info.Roles) == 0 {
				continue
			}
		}
		out = append(out, info)
	}
	return out
}
