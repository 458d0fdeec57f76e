package server

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/auth"
	"github.com/wfd-dev/wfd/server/internal/live"
	"github.com/wfd-dev/wfd/server/internal/rpc"
)

// DroppedVersions is Options.DroppedVersions.
type DroppedVersions = live.Dropped

// What start-up does with running handlers of dropped versions.
const (
	DroppedRefuse  = live.DroppedRefuse
	DroppedFail    = live.DroppedFail
	DroppedUpgrade = live.DroppedUpgrade
)

// DefaultWorkerLinger is Options.WorkerLinger's default: longer than a
// worker's round trip under load on the development machine (docs/PERFORMANCE.md
// "With a step worker").
const DefaultWorkerLinger = 10 * time.Millisecond

// Off, given to an Options field whose zero value takes a default, turns
// off what that field bounds (each field says whether it can be): a zero
// field is always its default, never "none". Any negative value does the
// same as Off.
const Off = -1

// Options configure a Server. A zero field takes its default.
type Options struct {
	// Store keeps handlers durable: the default namespace's. Required;
	// the server does not close it.
	Store persistence.Store
	// Namespaces are the namespaces served besides the default one, each
	// on a store of its own. Options.Workflows are served in every one.
	Namespaces []Namespace
	// Workflows to serve.
	Workflows []engine.Workflow
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Heartbeat is how often a quiet stream gets a heartbeat (default 15s,
	// well inside the 60 s that proxies such as nginx allow a silent stream).
	Heartbeat time.Duration
	// MaxMessageBytes bounds a request message (default 4 MiB); a step
	// worker's StepCall and FinishRun may be as large as a run's output
	// (16 × Limits.MaxPayloadBytes and framing).
	MaxMessageBytes int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// IdleTimeout releases a handler that has been idle in memory this
	// long. Default: never (the command line's default is 30s).
	IdleTimeout time.Duration
	// MaxIdleInMemory caps the idle handlers kept in memory; past it the
	// least recently active are released. Default: no cap.
	MaxIdleInMemory int
	// Linger is how long a handler may hold its changes back while step runs
	// are in progress, so that a quick step's start and end share a commit
	// (engine.Options.Linger). 0 takes engine.DefaultLinger (2ms); Off
	// disables it.
	Linger time.Duration
	// WorkerLinger is the Linger of the steps step workers run
	// (flow.Step.Linger): their runs cross the network twice, so a start
	// and the park it leads to share a commit only if the handler waits
	// that long. 0 takes DefaultWorkerLinger; Off leaves them Linger's.
	WorkerLinger time.Duration
	// CompactIdleAbove: once more handlers than this are in memory, an
	// idle handler keeps its events' data encoded while it waits
	// (engine.Options.CompactIdleAbove): a few hundred bytes less per idle
	// handler, for an encode and a decode of that data per wait. 0 takes
	// engine.DefaultCompactIdleAbove (10,000: with fewer the memory is not
	// worth the CPU); Off: never.
	CompactIdleAbove int
	// ReclaimAfter is how long releases must have stopped before the
	// server gives the memory they freed back to the OS.
	// Default 1s; Off disables it.
	ReclaimAfter time.Duration
	// Limits bound what one handler may hold and one step run produce
	// (engine.Limits; zero fields take the engine's defaults). Their
	// payload limits apply to what clients send too.
	Limits engine.Limits
	// MaxConnections caps the client connections Serve keeps open; one
	// accepted past it is closed at once (the client sees Unavailable).
	// Default DefaultMaxConnections; Off: no cap.
	MaxConnections int
	// MaxStreamsPerConnection caps the concurrent calls (HTTP/2 streams)
	// on one connection (SETTINGS_MAX_CONCURRENT_STREAMS): clients queue
	// or open another connection, and a stream past it is reset. Default
	// DefaultMaxStreamsPerConnection.
	MaxStreamsPerConnection int
	// ReadBodyTimeout is how long a request body may stall: a read of it
	// that gets no bytes for this long fails the call (DeadlineExceeded;
	// an HTTP/1.1 connection is closed). It is also the window of
	// MinBodyRate. Default DefaultReadBodyTimeout; Off disables both.
	ReadBodyTimeout time.Duration
	// MinBodyRate is the least rate, in bytes a second, a request body
	// must keep up: a body gets ReadBodyTimeout, plus 1/MinBodyRate s for
	// each byte it sends, but never more than ReadBodyTimeout ahead, so
	// one that trickles in slower fails its call like a stalled one. It
	// does not apply to requests that are streams (client and bidi
	// streaming). Default DefaultMinBodyRate; Off: no minimum.
	MinBodyRate int
	// IdleConnTimeout closes a connection that has had no call in progress
	// this long: an HTTP/1.1 keep-alive connection between requests, an
	// HTTP/2 connection without streams (GOAWAY). Default
	// DefaultIdleConnTimeout; Off: kept until the client closes it.
	IdleConnTimeout time.Duration
	// PingTimeout: an HTTP/2 connection that sends nothing for this long
	// gets a PING, and is closed if the answer does not come within as
	// long again. That is how a peer that stopped (a frozen process, a
	// network that drops everything) is noticed; for a step worker it
	// ends its Connect stream, and its runs are dispatched to another.
	// Default DefaultPingTimeout; Off: no pings.
	PingTimeout time.Duration
	// ShutdownDelay is how long Serve, once told to stop, keeps serving
	// every call while gRPC health and /readyz say it is going, before it
	// drains. Set it to the time load balancers take to
	// notice; with Kubernetes, a few seconds. 0: drain at once.
	ShutdownDelay time.Duration
	// TLSConfig, when set, makes Serve speak TLS (HTTP/2 by ALPN, and
	// HTTP/1.1) instead of plaintext HTTP/2 and HTTP/1.1. It needs a
	// certificate (Certificates or GetCertificate; package tlsfiles builds
	// one that reloads its files) and, for mTLS, ClientCAs and ClientAuth.
	TLSConfig *tls.Config
	// Auth authenticates callers (server/auth); nil: every call is
	// allowed, without identities, and Serve logs so. Health checks,
	// reflection and the HTTP probes stay open either way.
	Auth *auth.Authenticator
	// WorkerGrants lets other subjects than a worker-defined workflow's
	// owner (the subject whose worker first registered it) serve it, by
	// workflow name: subjects, or "group:<role>" for every holder of the
	// role. Only with Auth.
	WorkerGrants map[string][]string
	// Reflection serves gRPC reflection; nil: on when Auth is nil, off
	// when it is set.
	Reflection *bool
	// AllowedHosts are the Host headers served: "*", a host
	// (any port) or host:port; others get 403. Nil: any (the command line
	// passes LoopbackDefaults on a loopback address).
	AllowedHosts []string
	// AllowedOrigins are the browser origins served and answered CORS:
	// "*", an origin, or one with any port ("http://localhost:*"); a
	// request with another Origin header gets 403. Nil: no check.
	AllowedOrigins []string
	// DroppedVersions says what start-up does with running handlers of a
	// version of a built-in workflow (Workflows) that is no longer
	// registered: refuse to start, naming them (the default), fail them,
	// or move them to the current version (refusing to start if one
	// cannot move).
	DroppedVersions DroppedVersions
	// Retention, if positive, deletes finished handlers (completed,
	// failed, cancelled) once they have been finished this long, with
	// their records and tasks; default: kept forever.
	Retention time.Duration
	// SchedulePoll is how often the scheduler looks for due schedules
	// (default 1 s): a schedule created through another replica fires
	// its first tick that late at most.
	SchedulePoll time.Duration
	// RetentionInterval is how often the retention sweep runs; 0: a tenth
	// of Retention, between 1s and 1m.
	RetentionInterval time.Duration
	// RetentionBatch bounds the handlers one commit of the sweep deletes
	// (0: DefaultRetentionBatch).
	RetentionBatch int
	// TracerProvider, if set, traces every call (otelconnect) and the
	// rehydrations, step runs and store commits they cause (internal/observe).
	// nil: no tracing.
	TracerProvider trace.TracerProvider
	// Streams bound the memory StreamEvents streams hold (zero fields
	// take the defaults).
	Streams StreamLimits
	// Console serves the web console's files under /ui/ on the console
	// listener (ServeWithConsole; package console); nil: the console
	// listener serves the API only.
	Console http.Handler
	// PeerTLS, with TLSConfig, gives the TLS configuration of a new
	// connection to the replica at addr (host:port) for forwarded calls
	// (tlsfiles.Peer.ClientConfig makes one from files).
	// nil with TLSConfig set: calls are not forwarded but refused naming
	// the owner. Unused without TLSConfig (forwarding is cleartext).
	PeerTLS func(addr string) (*tls.Config, error)
	// Replica, when its ID is set, runs the server as one of several
	// replicas sharing Store, which must implement persistence.Leaser
	// (PostgreSQL, opened with Options.Shared): it owns the handlers it
	// has in memory by lease. The zero Replica: one process.
	Replica Replica
}

// withDefaults checks o and fills in the defaults of its zero fields.
func (o Options) withDefaults() (Options, error) {
	if o.Store == nil {
		return o, errors.New("server: Options.Store is required")
	}
	if err := checkNamespaces(o.Namespaces); err != nil {
		return o, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	switch {
	case o.WorkerLinger == 0:
		o.WorkerLinger = DefaultWorkerLinger
	case o.WorkerLinger < 0:
		o.WorkerLinger = 0
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 4 << 20
	}
	if o.MaxStreamsPerConnection <= 0 {
		o.MaxStreamsPerConnection = DefaultMaxStreamsPerConnection
	}
	orDefault(&o.ReclaimAfter, time.Second)
	orDefault(&o.MaxConnections, DefaultMaxConnections)
	orDefault(&o.ReadBodyTimeout, DefaultReadBodyTimeout)
	orDefault(&o.PingTimeout, DefaultPingTimeout)
	orDefault(&o.MinBodyRate, DefaultMinBodyRate)
	orDefault(&o.IdleConnTimeout, DefaultIdleConnTimeout)
	return o, nil
}

// orDefault sets *v to def if it is zero.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

// StreamLimits bound the memory StreamEvents streams hold; zero fields
// take the defaults (DefaultStreamBufferBytes, DefaultStreamMemoryBytes,
// DefaultStreamSendTimeout).
type StreamLimits = rpc.StreamLimits

// The defaults of StreamLimits.
const (
	DefaultStreamBufferBytes = rpc.DefaultStreamBufferBytes
	DefaultStreamMemoryBytes = rpc.DefaultStreamMemoryBytes
	DefaultStreamSendTimeout = rpc.DefaultStreamSendTimeout
)
