package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/live"
	"github.com/wfd-dev/wfd/server/internal/observe"
	"github.com/wfd-dev/wfd/server/internal/replica"
	"github.com/wfd-dev/wfd/server/internal/rpc"
	"github.com/wfd-dev/wfd/server/internal/schedules"
	"github.com/wfd-dev/wfd/server/internal/workers"
)

// Server is wfd's API on top of an engine and a store.
type Server struct {
	opts    Options
	log     *slog.Logger
	store   persistence.Store
	engine  *engine.Engine
	journal *live.Journal
	// authFails throttles clients that keep failing authentication.
	authFails *authFailures
	hub       *live.Hub
	streams   *rpc.StreamBudget // what streams may hold
	// replica is replica mode (internal/replica): the handler leases, and
	// the forwarding of calls refused for a handler live on another
	// replica to that replica (nil: one process).
	replica *replica.Replica

	// rt keeps the handlers live (internal/live).
	rt *live.Runtime
	// service serves the API (internal/rpc).
	service *rpc.Service
	health  *observe.Health
	// workers are the connected step workers (internal/workers).
	workers *workers.Registry
	// schedules fires schedules' ticks and answers their methods.
	schedules *schedules.Scheduler
	stats     *observe.Stats
	// metrics is the Prometheus registry served at /metrics (internal/observe).
	metrics *observe.Metrics
	// tracing makes the spans (internal/observe); traceInterceptors are its
	// interceptors (none when off).
	tracing           *observe.Tracing
	traceInterceptors []connect.Interceptor

	// shutdown is the drain as calls see it.
	shutdown     *shutdown
	shutdownOnce sync.Once
}

// New builds a server and resumes the handlers that were running in the
// store (their in-progress step runs run again).
func New(ctx context.Context, opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := wire(opts)
	if err != nil {
		return nil, err
	}
	if err := s.start(ctx); err != nil {
		_ = s.Close(ctx)
		return nil, err
	}
	return s, nil
}

// wire builds the server's parts and connects them; nothing runs yet.
func wire(opts Options) (*Server, error) {
	streams := rpc.NewStreamBudget(opts.Streams)
	s := &Server{opts: opts, log: opts.Logger, store: opts.Store, streams: streams, authFails: newAuthFailures(opts.Now),
		health: observe.NewHealth(opts.Store, opts.Logger), stats: &observe.Stats{Hist: observe.NewHistograms()}}
	s.shutdown = newShutdown(opts.ShutdownDelay, s.health, opts.Logger)
	s.metrics = observe.NewMetrics(s.stats.Hist, s.snapshot)
	observe.ObserveStoreSync(opts.Store, s.stats.Hist)
	s.tracing = observe.NewTracing(opts.TracerProvider)
	var err error
	if s.traceInterceptors, err = s.tracing.Interceptors(); err != nil {
		return nil, err
	}
	s.replica, err = replica.New(replica.Options{Config: opts.Replica, Store: opts.Store, Logger: opts.Logger, Now: opts.Now,
		TLS: opts.TLSConfig != nil, PeerTLS: opts.PeerTLS, Auth: opts.Auth, Tracing: s.tracing})
	if err != nil {
		return nil, err
	}
	wopts := workers.Options{Store: opts.Store, Logger: opts.Logger, Now: opts.Now, Heartbeat: opts.Heartbeat,
		MaxMessageBytes: opts.MaxMessageBytes, WorkerGrants: opts.WorkerGrants, Draining: s.shutdown.draining,
		DispatchSeconds: s.stats.Hist.Dispatch, RunLinger: opts.WorkerLinger}
	if s.replica != nil {
		wopts.Replica = s.replica
	}
	s.workers = workers.New(wopts)
	ropts := live.Options{Store: opts.Store, Workflows: opts.Workflows, Logger: opts.Logger, Now: opts.Now,
		Engine:      engine.Options{Logger: opts.Logger, Now: opts.Now, Linger: opts.Linger, CompactIdleAbove: opts.CompactIdleAbove, Limits: opts.Limits},
		IdleTimeout: opts.IdleTimeout, MaxIdleInMemory: opts.MaxIdleInMemory, ReclaimAfter: max(opts.ReclaimAfter, 0),
		Retention: opts.Retention, RetentionInterval: opts.RetentionInterval, RetentionBatch: opts.RetentionBatch,
		StreamBuffer: streams.Limits().BufferBytes, Stats: s.stats, Tracing: s.tracing,
		Workers: s.workers, Health: s.health}
	if s.replica != nil {
		ropts.Ownership = s.replica
	}
	if s.rt, err = live.New(ropts); err != nil {
		return nil, err
	}
	s.workers.Attach(s.rt)
	s.engine, s.journal, s.hub = s.rt.Engine(), s.rt.Journal(), s.rt.Hub()
	s.schedules = schedules.New(schedules.Options{Store: opts.Store, Runs: scheduleRuns{rt: s.rt, workers: s.workers},
		Logger: opts.Logger, Now: opts.Now, Poll: opts.SchedulePoll, Stats: s.stats})
	s.service = rpc.New(rpc.Options{Runtime: s.rt, Schedules: s.schedules, Store: opts.Store, Logger: opts.Logger, Now: opts.Now, Heartbeat: opts.Heartbeat,
		Streams: streams, Draining: s.shutdown.draining, Workers: s.workers, Replica: s.replica,
		AuthOn: opts.Auth != nil, Snapshot: s.snapshot})
	return s, nil
}

// start joins the replicas (in replica mode), recovers what was running,
// and starts the loops.
func (s *Server) start(ctx context.Context) error {
	// Joining follows the other replicas' commits, before recovery (see
	// internal/replica's feedResync).
	if err := s.replica.Join(ctx, s.rt); err != nil {
		return err
	}
	// Stored worker definitions first: their handlers are recovered too.
	if err := s.workers.LoadStored(ctx); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if err := s.rt.CheckDropped(ctx, s.opts.DroppedVersions); err != nil {
		return err
	}
	if err := s.rt.Recover(ctx); err != nil {
		return err
	}
	if err := s.rt.RecheckWaitingParents(ctx); err != nil {
		return fmt.Errorf("server: checking on waiting parents: %w", err)
	}
	s.rt.Run()
	s.rt.Go(func() { s.workers.RouteLoop(s.rt.Background()) })
	s.rt.Go(func() { s.schedules.Loop(s.rt.Background()) })
	s.replica.Sweep()
	return nil
}

// Handler returns the HTTP handler that serves the API, health checks,
// reflection, and the open operational endpoints: /metrics, /healthz and
// /readyz. A request body that stalls for Options.ReadBodyTimeout,
// or arrives slower than Options.MinBodyRate, fails its call.
func (s *Server) Handler() http.Handler {
	return guard(s.handler(false), &s.opts)
}

// guard wraps h with what every request to the server's listeners goes
// through: the bounds on request bodies (guardBodies), and the
// ResponseController in the context.
func guard(h http.Handler, o *Options) http.Handler {
	streamed := streamedRequests(wfdv1connect.WorkflowServiceName, wfdv1connect.WorkerServiceName, grpchealth.HealthV1ServiceName)
	return rpc.WithResponseController(guardBodies(h, o.ReadBodyTimeout, o.MinBodyRate, streamed))
}

// handler is Handler; sameOrigin also accepts a browser origin equal to
// the request's own (the console's page calling its server: ConsoleHandler).
func (s *Server) handler(sameOrigin bool) http.Handler {
	mux := http.NewServeMux()
	opts := []connect.HandlerOption{
		connect.WithReadMaxBytes(s.opts.MaxMessageBytes),
		connect.WithSendMaxBytes(64 << 20),
		// Most messages are small; compressing them costs more CPU than
		// the bytes it saves on loopback or a LAN.
		connect.WithCompressMinBytes(4 << 10),
		// Counts every call by its final code (internal/observe), which
		// apierr.Edge, inside it, decides for every call: handlers and the
		// interceptors after it return plain errors. Internal errors reach
		// clients as a message and an error id; apierr.Edge logs their
		// detail under that id (server/internal/apierr).
		connect.WithInterceptors(s.metrics.Interceptor()),
		// Spans per call when tracing is on (internal/observe).
		connect.WithInterceptors(s.traceInterceptors...),
		connect.WithInterceptors(apierr.Edge{Log: s.log}),
	}
	svcOpts := append(slices.Clip(opts), connect.WithInterceptors(authorizer{auth: s.opts.Auth, fails: s.authFails, log: s.log}, drainGate{s.shutdown}))
	mux.Handle(wfdv1connect.NewWorkflowServiceHandler(s.service, append(slices.Clip(svcOpts), connect.WithInterceptors(s.replica))...))
	s.workers.Mount(mux, svcOpts)
	mux.Handle(s.health.Handler(opts...))
	if s.opts.reflection() {
		reflector := grpcreflect.NewStaticReflector(wfdv1connect.WorkflowServiceName, wfdv1connect.WorkerServiceName, grpchealth.HealthV1ServiceName)
		mux.Handle(grpcreflect.NewHandlerV1(reflector))
		mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	}
	probes{shutdown: s.shutdown, health: s.health, store: s.store, metrics: s.metrics}.handle(mux)
	// Malformed message frames are the client's fault: InvalidArgument
	// (checkFrames).
	h := checkFrames(mux)
	if s.opts.Auth != nil {
		h = authenticate(s.opts.Auth, h)
	}
	return hostOriginGuard(h, s.opts.AllowedHosts, s.opts.AllowedOrigins, sameOrigin)
}

// reflection says whether the server serves gRPC reflection.
func (o *Options) reflection() bool {
	if o.Reflection != nil {
		return *o.Reflection
	}
	return o.Auth == nil
}

// HTTPServer returns an http.Server for Handler that speaks HTTP/1.1 and
// plaintext HTTP/2 (needed by gRPC) on one port, or with Options.TLSConfig
// HTTP/1.1 and HTTP/2 over TLS (serve it with ServeTLS(l, "", "")).
func (s *Server) HTTPServer() *http.Server {
	return s.httpServer(s.Handler())
}

func (s *Server) httpServer(h http.Handler) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	var tlsConfig *tls.Config
	if s.opts.TLSConfig != nil {
		protocols.SetHTTP2(true)
		tlsConfig = s.opts.TLSConfig.Clone()
	} else {
		protocols.SetUnencryptedHTTP2(true)
	}
	return &http.Server{
		TLSConfig:         tlsConfig,
		Handler:           h,
		Protocols:         &protocols,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       max(s.opts.IdleConnTimeout, 0), // HTTP/2's (h2c's) too: GOAWAY once no stream is open
		MaxHeaderBytes:    64 << 10,
		HTTP2:             s.opts.http2Config(),
		BaseContext:       func(net.Listener) context.Context { return s.shutdown.requests },
		// net/http reports every client that hangs up (GOAWAY, resets)
		// here: useful when debugging, noise otherwise.
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
}

// http2Config is the HTTP/2 configuration of the server's connections.
func (o *Options) http2Config() *http.HTTP2Config {
	c := &http.HTTP2Config{MaxConcurrentStreams: o.MaxStreamsPerConnection}
	if o.PingTimeout > 0 {
		c.SendPingTimeout, c.PingTimeout = o.PingTimeout, o.PingTimeout
	}
	return c
}

// Serve serves l until ctx is done, then shuts down gracefully (see
// see shutdown): it refuses new calls, ends streams with Unavailable, lets the
// calls in flight finish with their result and step runs in progress
// finish (until the grace period passes), checkpoints every handler and
// waits for the last commit. At most Options.MaxConnections connections
// are kept open.
func (s *Server) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	return s.ServeWithConsole(ctx, l, nil, grace)
}

// ServeWithConsole is Serve with a second listener, console (nil: none),
// for the web console: ConsoleHandler there, with the same TLS, connection
// cap and shutdown as l.
func (s *Server) ServeWithConsole(ctx context.Context, l, console net.Listener, grace time.Duration) error {
	if s.opts.MaxConnections > 0 {
		l = newLimitListener(l, s.opts.MaxConnections, s.log)
	}
	if s.opts.Auth == nil {
		s.log.Warn("serving without authentication: whoever reaches the port may call every method (see --auth-tokens, --auth-jwks)", "addr", l.Addr().String())
	}
	servers := []*http.Server{s.HTTPServer()}
	listeners := []net.Listener{l}
	if console != nil {
		if s.opts.MaxConnections > 0 {
			console = newLimitListener(console, s.opts.MaxConnections, s.log)
		}
		servers = append(servers, s.httpServer(s.ConsoleHandler()))
		listeners = append(listeners, console)
	}
	errc := make(chan error, len(servers))
	for i, hs := range servers {
		go func() {
			if hs.TLSConfig != nil {
				// ServeTLS adds "h2" and "http/1.1" to the ALPN protocols.
				errc <- hs.ServeTLS(listeners[i], "", "")
				return
			}
			errc <- hs.Serve(listeners[i])
		}()
	}
	select {
	case err := <-errc:
		for _, hs := range servers {
			_ = hs.Close()
		}
		_ = s.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	s.shutdown.leave()
	s.log.Info("shutting down", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.shutdown.drain()
	herrs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, hs := range servers {
		wg.Go(func() { herrs[i] = hs.Shutdown(sctx) })
	}
	wg.Wait()
	herr := errors.Join(herrs...)
	if herr != nil {
		// The grace period is over: end the calls left, give them a moment
		// to answer, and close their connections.
		s.log.Warn("grace period over with calls in flight; ending them", "err", herr)
		s.shutdown.cancelRequests()
		qctx, qcancel := context.WithTimeout(context.Background(), time.Second)
		for _, hs := range servers {
			_ = hs.Shutdown(qctx)
			_ = hs.Close()
		}
		qcancel()
	}
	if cerr := s.Close(sctx); cerr != nil {
		return cerr
	}
	if herr != nil && !errors.Is(herr, context.DeadlineExceeded) {
		return herr
	}
	return nil
}

// Close stops the engine (letting runs in progress finish until ctx is
// done) and waits for the journal's last commit. The store stays open.
// Streams end with Unavailable and new calls are refused (an embedder's
// http.Server keeps serving Handler until it is shut down).
func (s *Server) Close(ctx context.Context) error {
	var err error
	s.shutdownOnce.Do(func() {
		s.shutdown.drain()
		s.shutdown.cancelRequests()
		rerr := s.rt.Close(ctx)
		// Every change is committed: the handlers are handed over (or,
		// if the database does not answer, their leases expire).
		lerr := s.replica.Leave(context.Background())
		err = errors.Join(rerr, lerr)
	})
	return err
}
