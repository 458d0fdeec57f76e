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
	"github.com/wfd-dev/wfd/namespace"
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

	// spaces are the namespaces served, by name (namespaces.go), and
	// order their names sorted; the fields above that belong to one
	// namespace (replica, rt, workers, schedules, service and what rt
	// holds) are the default namespace's.
	spaces map[string]*space
	order  []string
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
		health: observe.NewHealth(opts.Store, opts.Logger), stats: &observe.Stats{Hist: observe.NewHistograms()},
		spaces: map[string]*space{}}
	s.shutdown = newShutdown(opts.ShutdownDelay, s.health, opts.Logger)
	s.metrics = observe.NewMetrics(s.stats.Hist, s.snapshotAll)
	s.tracing = observe.NewTracing(opts.TracerProvider)
	var err error
	if s.traceInterceptors, err = s.tracing.Interceptors(); err != nil {
		return nil, err
	}
	all := append([]Namespace{{Name: namespace.Default, Store: opts.Store, Retention: opts.Retention}}, opts.Namespaces...)
	for _, n := range all {
		observe.ObserveStoreSync(n.Store, s.stats.Hist)
		retention := n.Retention
		if retention == 0 {
			retention = opts.Retention
		}
		sp, err := s.wireSpace(n.Name, n.Store, retention)
		if err != nil {
			return nil, err
		}
		s.spaces[n.Name] = sp
		s.order = append(s.order, n.Name)
	}
	slices.Sort(s.order)
	def := s.spaces[namespace.Default]
	s.replica, s.workers, s.rt, s.schedules, s.service = def.replica, def.workers, def.rt, def.schedules, def.service
	s.engine, s.journal, s.hub = s.rt.Engine(), s.rt.Journal(), s.rt.Hub()
	return s, nil
}

// start starts every namespace: joins the replicas (in replica mode),
// recovers what was running, and starts the loops.
func (s *Server) start(ctx context.Context) error {
	for _, name := range s.order {
		if err := s.spaces[name].start(ctx, s.opts.DroppedVersions); err != nil {
			if name != namespace.Default {
				return fmt.Errorf("namespace %s: %w", name, err)
			}
			return err
		}
	}
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
	svcOpts := append(slices.Clip(opts), connect.WithInterceptors(authorizer{auth: s.opts.Auth, fails: s.authFails, log: s.log},
		namespaceGate{s}, drainGate{s.shutdown}))
	// Each namespace serves the API on a mux of its own; byNamespace
	// picks it by the call's Wfd-Namespace header.
	muxes := map[string]*http.ServeMux{}
	for name, sp := range s.spaces {
		muxes[name] = sp.mount(svcOpts)
	}
	api := s.byNamespace(muxes)
	mux.Handle("/"+wfdv1connect.WorkflowServiceName+"/", api)
	mux.Handle("/"+wfdv1connect.WorkerServiceName+"/", api)
	mux.Handle(s.health.Handler(opts...))
	if s.opts.reflection() {
		reflector := grpcreflect.NewStaticReflector(wfdv1connect.WorkflowServiceName, wfdv1connect.WorkerServiceName, grpchealth.HealthV1ServiceName)
		mux.Handle(grpcreflect.NewHandlerV1(reflector))
		mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	}
	p := probes{shutdown: s.shutdown, health: s.health, metrics: s.metrics}
	for _, name := range s.order {
		p.stores, p.names = append(p.stores, s.spaces[name].store), append(p.names, name)
	}
	p.handle(mux)
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
		errs := make([]error, len(s.order))
		var wg sync.WaitGroup
		for i, name := range s.order {
			wg.Go(func() { errs[i] = s.spaces[name].close(ctx) })
		}
		wg.Wait()
		err = errors.Join(errs...)
	})
	return err
}
