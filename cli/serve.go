package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/wfd-dev/wfd/console"
	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/gcpolicy"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/server/tlsfiles"
	"github.com/wfd-dev/wfd/workflows"
)

func serveCommand() *command {
	return &command{
		name:    "serve",
		args:    "[--addr HOST:PORT] [--console-addr HOST:PORT] [--data DIR] [--store URL [--replica-id ID [--advertise-addr HOST:PORT] [--lease-ttl D]]] [--idle-timeout D] [--max-idle-in-memory N] [--retention D] [--grace D] [--shutdown-delay D] [--gc-headroom-mib N [--gc-min-percent P]] [--max-LIMIT N] [--max-connections N] [--max-streams-per-connection N] [--read-body-timeout D] [--min-body-rate N] [--idle-conn-timeout D] [--ping-timeout D] [--max-stream-memory-bytes N] [--max-stream-buffer-bytes N] [--stream-send-timeout D] [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE] [--tls-client-auth MODE] [--peer-ca FILE] [--peer-server-name NAME]] [--peer-secret-file FILE] [--log-level L] [--log-format text|json] [--auth-tokens FILE] [--auth-jwks FILE|URL] [--auth-jwt-issuer ISS] [--auth-jwt-audience AUD] [--worker-grant WORKFLOW=WHO,...] [--reflection[=BOOL]] [--allowed-hosts H,...] [--allowed-origins O,...] [--debug-allow-remote]",
		summary: "run the server until interrupted",
		detail:  serveDetail,
		define: func(fs *flagSet) action {
			var o serveOptions
			o.define(fs)
			return func(ctx context.Context, e *env, _ []string) error {
				fs.Visit(func(f *flag.Flag) { o.consoleAddrSet = o.consoleAddrSet || f.Name == "console-addr" })
				return serve(ctx, e.stderr, &o)
			}
		},
	}
}

// serveDetail is the help text of wfd serve.
const serveDetail = `Serves the API (Connect, gRPC and gRPC-Web on one plaintext HTTP/2 port,
with gRPC health checks and reflection) for the example workflows, keeping
handlers in DATA/wfd.db, or with --store postgres://USER:PASS@HOST/DB
(or postgresql://..., any pgx connection URL) in that PostgreSQL
database, whose schema wfd creates and migrates (one wfd process per
database, unless in replica mode: below). It logs "listening" with the address once it
accepts connections, and on SIGINT or SIGTERM drains: health checks say
NOT_SERVING, new calls fail with Unavailable, streams end with Unavailable
(clients resume after the last sequence number they got), calls in flight
finish with their result; then step runs finish, for up to the grace
period in all, and every handler is checkpointed. With --shutdown-delay,
the drain waits that long first while health checks and /readyz already
say the server is going and every call is still served, so that load
balancers stop sending calls before any is refused (a Kubernetes
terminationGracePeriodSeconds must cover the delay and the grace period).

The web console is served on --console-addr (default 127.0.0.1:7234,
"" disables it) at /ui/ (/ redirects there): the inbox of human tasks with
forms from their answer schemas, handlers with live timelines, workflows,
published events and an overview. That port also serves the API itself,
with the same authentication, Host and Origin checks and TLS as --addr (a
page calls it from its own origin), so the console uses the public API
only. Left at its default, a console address already in use is logged
and skipped; given explicitly, it must be free.

The same port serves, without credentials, GET /healthz (200 while the
process serves), GET /readyz (200 while the store can commit and the
server is not draining, 503 with the reason otherwise) and GET /metrics
(Prometheus).

Tracing (OpenTelemetry, OTLP) is off unless the standard variables ask
for it: OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_TRACES_EXPORTER=otlp), with
OTEL_EXPORTER_OTLP_PROTOCOL grpc or http/protobuf (the default),
OTEL_SERVICE_NAME (default wfd), OTEL_TRACES_SAMPLER and the rest.

A client may keep --max-connections connections open (0: no cap; one more
is closed at once) and --max-streams-per-connection calls open on each; a
call whose request body sends nothing for --read-body-timeout (0: no
limit), or arrives slower than --min-body-rate bytes a second on average
(1024; 0: no minimum; a body gets --read-body-timeout plus what its bytes
pay for at that rate; client and bidi streams exempt), fails with
DeadlineExceeded, and its HTTP/1.1 connection is closed; so is the
connection of a call refused before its body was read. A connection with
no call in progress for --idle-conn-timeout (2m; 0: none) is closed
(HTTP/2: GOAWAY). A connection that sends nothing for --ping-timeout gets
an HTTP/2 PING and is closed if it goes unanswered as long again (0: no
pings): a step worker that stopped loses its runs to another worker that
way. StreamEvents streams may be sending at most --max-stream-memory-bytes
of records at once, and one may hold at most --max-stream-buffer-bytes
queued or read ahead of its client: a stream that cannot send its next
record in time ends with ResourceExhausted (resume after the sequence
number it names), and one whose client does not take a record for
--stream-send-timeout is cut off.

With --tls-cert and --tls-key the port speaks TLS instead (HTTP/2 by ALPN
and HTTP/1.1; default: plaintext, and a warning in the log when the
address is not a loopback one). The files are checked at each handshake
and loaded again when they change (a pair that does not load is logged and
the previous one kept). --tls-client-ca makes it mutual TLS: clients must
present a certificate signed by one of those CAs (--tls-client-auth
require, the default), or may come without one (verify-if-given).

A handler idle in memory for --idle-timeout (0 disables) is written to the
store and dropped from memory; so are the least recently active ones when
more than --max-idle-in-memory (0: no cap) are idle in memory. An event, a
due timer or a restart brings them back.

With --replica-id (PostgreSQL only) several wfd processes share one
database as replicas: each registers ID with the host:port clients reach
it at (--advertise-addr; default the --addr it listens on) and owns the
handlers it has in memory by lease (--lease-ttl, default 10s, renewed
every third of it). A call for a handler another live replica owns is
forwarded to that replica and answered by it, in the caller's name: a
bearer token travels as is; a caller known by its client certificate is
vouched for with the secret in --peer-secret-file, which every replica
must share (default none: such a call is refused naming the owner, and
the client retries there). With TLS, replicas dial each other with TLS:
they trust --peer-ca (default: --tls-client-ca, else the system's
roots), check the certificate against the host of the --advertise-addr
(or --peer-server-name), and present their own --tls-cert to a replica
that asks for a client certificate (it must allow clientAuth too). A
replica killed without leaving has its handlers picked up by the others
once its leases expire, without waiting for a call; due timers are
claimed by one replica; streams and waits follow a handler to whichever
replica has it; step workers may connect to any replica (the work of a
workflow goes where its workers are). Without --replica-id: one process
per database (an advisory lock makes sure).

A finished handler (completed, failed, cancelled) is kept until deleted
(wfd delete) or, with --retention, deleted with its stream, checkpoint and
tasks once it has been finished that long (0, the default: kept forever).
A sweep runs every tenth of the retention (between 1s and 1m); a finished
child waits for its parent to finish. Published events are never deleted.

The garbage collector may let the heap grow --gc-headroom-mib past the
live heap between collections (GOGC set from the live heap after each
collection, between --gc-min-percent and 1000): rare collections while few
handlers are in memory. Once the live heap is larger, the heap may grow
--gc-min-percent (100, Go's default) past it, which keeps the collector's
cost per operation the same however many handlers are in memory; a lower
value keeps the heap closer to its live size for more collector CPU (25:
four times the marking). 0, or GOGC in the environment, leaves Go's own
policy; GOMEMLIMIT applies as usual.

Limits keep any input from making the server allocate without bound. A
payload (an input, event data, a result, a stored value, a task answer)
may nest --max-payload-depth levels and encode to --max-payload-bytes;
one that breaks them, or holds what JSON cannot (NaN, Infinity, a value
with no kind), is InvalidArgument from the API and fails a step that
produces it. A handler may start --max-children children, hold
--max-queued-events events for its steps (also the most one step run may
send and write, and the waits it may pass), write stream events of --max-record-bytes each, and keep
--max-store-bytes in its key/value store. A step past a limit fails its
run; an event from outside past one is ResourceExhausted.`

// define declares serve's flags, into o, and the environment variables
// that set them.
func (o *serveOptions) define(fs *flagSet) {
	fs.StringVar(&o.addr, "addr", defaultAddr, "`host:port` to listen on (port 0 picks one)")
	fs.StringVar(&o.consoleAddr, "console-addr", defaultConsoleAddr, "`host:port` of the web console and the API beside it (port 0 picks one; empty: no console)")
	fs.StringVar(&o.data, "data", "./data", "`directory` of the store")
	fs.StringVar(&o.store, "store", "", "PostgreSQL `URL` (postgres://...) to keep handlers in (default: the bbolt file DATA/wfd.db)")
	fs.StringVar(&o.replica.ID, "replica-id", "", "run as replica `ID` of several sharing the --store PostgreSQL database (default: none, one process per database)")
	fs.StringVar(&o.replica.Address, "advertise-addr", "", "`host:port` clients reach this replica at, named to calls for its handlers elsewhere (default: the --addr it listens on)")
	fs.DurationVar(&o.replica.LeaseTTL, "lease-ttl", server.DefaultLeaseTTL, "with --replica-id, how long a replica's registration and handler leases last unrenewed (renewed every third of it)")
	fs.DurationVar(&o.grace, "grace", 10*time.Second, "how long shutting down waits for calls and step runs in progress")
	fs.DurationVar(&o.shutdownDelay, "shutdown-delay", 0, "on SIGTERM, keep serving this long while health and /readyz say the server is going, then drain (0: drain at once)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", 30*time.Second, "release a handler idle in memory this long (0 disables)")
	fs.IntVar(&o.maxIdle, "max-idle-in-memory", 0, "release the least recently active idle handlers past this many (0: no cap)")
	fs.DurationVar(&o.retention, "retention", 0, "delete finished handlers, with their streams and tasks, this long after they finished (0: keep them forever)")
	fs.Var(&o.namespaces, "namespace", "serve namespace `NAME[=RETENTION]` besides \"default\", on a store of its own (DATA/namespaces/NAME/wfd.db, or schema wfd_ns_NAME of --store); RETENTION (a duration or \"forever\") overrides --retention there; repeat for more")
	fs.IntVar(&o.gcHeadroomMiB, "gc-headroom-mib", 32, "MiB the heap may grow past its live size between collections (0: Go's GOGC)")
	fs.IntVar(&o.gcMinPercent, "gc-min-percent", gcpolicy.DefaultMinPercent, "the least GOGC the garbage collector's tuner sets (how far past its live size a large heap may grow, in %)")
	fs.StringVar(&o.debugAddr, "debug-addr", "", "`host:port` for Go's pprof profiles (off when empty)")
	fs.IntVar(&o.limits.MaxChildren, "max-children", engine.DefaultMaxChildren, "children one handler may start")
	fs.IntVar(&o.limits.MaxQueuedEvents, "max-queued-events", engine.DefaultMaxQueuedEvents, "events one handler may hold for its steps; events one step run may send and write, and waits it may pass")
	fs.IntVar(&o.limits.MaxRecordBytes, "max-record-bytes", engine.DefaultMaxRecordBytes, "largest event a step may write to the stream, encoded")
	fs.IntVar(&o.limits.MaxStoreBytes, "max-store-bytes", engine.DefaultMaxStoreBytes, "largest key/value store of one handler, encoded")
	fs.IntVar(&o.limits.MaxPayloadDepth, "max-payload-depth", engine.DefaultMaxPayloadDepth, "deepest nesting of objects and lists in a payload")
	fs.IntVar(&o.limits.MaxPayloadBytes, "max-payload-bytes", engine.DefaultMaxPayloadBytes, "largest payload (input, event data, result, value), encoded")
	fs.IntVar(&o.maxConns, "max-connections", server.DefaultMaxConnections, "client connections kept open (0: no cap)")
	fs.IntVar(&o.maxStreams, "max-streams-per-connection", server.DefaultMaxStreamsPerConnection, "concurrent calls on one HTTP/2 connection")
	fs.DurationVar(&o.readBodyTimeout, "read-body-timeout", server.DefaultReadBodyTimeout, "fail a call whose request body stalls this long (0: no limit)")
	fs.IntVar(&o.minBodyRate, "min-body-rate", server.DefaultMinBodyRate, "fail a call whose request body arrives slower than this many bytes a second, averaged over --read-body-timeout (0: no minimum)")
	fs.DurationVar(&o.idleConnTimeout, "idle-conn-timeout", server.DefaultIdleConnTimeout, "close a connection with no call in progress this long (0: never)")
	fs.DurationVar(&o.pingTimeout, "ping-timeout", server.DefaultPingTimeout, "ping a connection quiet this long; close it if the ping goes unanswered as long (0: no pings)")
	fs.Int64Var(&o.streams.MemoryBytes, "max-stream-memory-bytes", server.DefaultStreamMemoryBytes, "bytes of records all StreamEvents streams may be sending at once")
	fs.Int64Var(&o.streams.BufferBytes, "max-stream-buffer-bytes", server.DefaultStreamBufferBytes, "bytes of records one stream may hold queued or read ahead of its client")
	fs.DurationVar(&o.streams.SendTimeout, "stream-send-timeout", server.DefaultStreamSendTimeout, "end a stream whose client does not take a record this long")
	fs.StringVar(&o.tls.Cert, "tls-cert", "", "PEM `file` of the server's certificate chain: serve TLS (default: plaintext)")
	fs.StringVar(&o.tls.Key, "tls-key", "", "PEM `file` of the server's private key (with --tls-cert)")
	fs.StringVar(&o.tls.ClientCA, "tls-client-ca", "", "PEM `file` of the CAs client certificates must chain to: mutual TLS (default: none)")
	o.clientAuth = choice{value: string(tlsfiles.Require), choices: []string{string(tlsfiles.Require), string(tlsfiles.VerifyIfGiven)}}
	fs.Var(&o.clientAuth, "tls-client-auth", "with --tls-client-ca, `mode` require or verify-if-given")
	fs.StringVar(&o.peer.CA, "peer-ca", "", "with --replica-id and TLS, PEM `file` of the CAs the other replicas' certificates must chain to (default: --tls-client-ca, else the system's roots)")
	fs.StringVar(&o.peer.ServerName, "peer-server-name", "", "with --replica-id and TLS, the `name` every replica's certificate must hold (default: the host of its --advertise-addr)")
	fs.fromEnv("peer-ca", "peer-server-name")
	fs.TextVar(&o.level, "log-level", slog.LevelInfo, "log `level`: debug, info, warn or error")
	o.format = choice{value: "text", choices: []string{"text", "json"}}
	fs.Var(&o.format, "log-format", "log `format`: text or json")
	o.auth.define(fs)
	fs.fromEnv("addr", "data", "store", "grace", "shutdown-delay", "idle-timeout", "max-idle-in-memory", "retention", "gc-headroom-mib", "gc-min-percent", "debug-addr", "log-level", "log-format",
		"max-children", "max-queued-events", "max-record-bytes", "max-store-bytes", "max-payload-depth", "max-payload-bytes",
		"max-connections", "max-streams-per-connection", "read-body-timeout", "min-body-rate", "idle-conn-timeout", "ping-timeout", "replica-id", "advertise-addr", "lease-ttl",
		"max-stream-memory-bytes", "max-stream-buffer-bytes", "stream-send-timeout")
	// WFD_TLS_CERT and WFD_TLS_KEY are the client commands' client
	// certificate: the server's TLS settings have variables of
	// their own, so a client run beside the server (kubectl exec)
	// does not present the server's certificate.
	fs.envAs("console-addr", "WFD_SERVE_CONSOLE_ADDR")
	for _, n := range []string{"tls-cert", "tls-key", "tls-client-ca", "tls-client-auth"} {
		fs.envAs(n, "WFD_SERVE_"+strings.ToUpper(strings.ReplaceAll(n, "-", "_")))
	}
}

// defaultConsoleAddr is where the web console listens unless told.
const defaultConsoleAddr = "127.0.0.1:7234"

type serveOptions struct {
	addr string
	// consoleAddr serves the console ("": none); consoleAddrSet: given
	// by flag or environment rather than left at its default.
	consoleAddr    string
	consoleAddrSet bool
	data           string
	store          string // "" (bbolt in data) or a PostgreSQL URL
	// replica is server.Options.Replica (no ID: one process).
	replica server.Replica
	grace   time.Duration
	// shutdownDelay is server.Options.ShutdownDelay.
	shutdownDelay time.Duration
	level         slog.Level
	format        choice

	idleTimeout time.Duration
	maxIdle     int
	retention   time.Duration
	debugAddr   string
	// namespaces are served besides the default one (servenamespaces.go).
	namespaces namespaceFlags

	gcHeadroomMiB int
	gcMinPercent  int

	limits engine.Limits

	maxConns        int
	maxStreams      int
	readBodyTimeout time.Duration
	minBodyRate     int
	idleConnTimeout time.Duration
	pingTimeout     time.Duration
	streams         server.StreamLimits

	tls        tlsfiles.Files
	clientAuth choice
	peer       tlsfiles.PeerFiles // how replicas dial each other (peerTLS)
	auth       authFlags
}

func newLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	// Lines logged with a traced call's context carry its trace id.
	if format == "json" {
		return slog.New(server.TraceLogHandler(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(server.TraceLogHandler(slog.NewTextHandler(w, opts)))
}

// serve runs the server until ctx is done and logs to logs.
func serve(ctx context.Context, logs io.Writer, o *serveOptions) (err error) {
	conn, err := o.validate()
	if err != nil {
		return err
	}
	log := newLogger(logs, o.level, o.format.value)
	tlsConfig, err := o.tlsConfig(log)
	if err != nil {
		return err
	}
	if o.gcHeadroomMiB > 0 {
		gc := gcpolicy.Start(gcpolicy.Options{Headroom: uint64(o.gcHeadroomMiB) << 20, MinPercent: o.gcMinPercent, Logger: log})
		defer gc.Stop()
	}
	// Authentication first: a bad token file or JWKS fails before the store opens.
	if err := o.auth.prepare(ctx, log, o.addr, o.debugAddr, o.tls.ClientCA != ""); err != nil {
		return err
	}
	peerTLS, err := o.peerTLS(log)
	if err != nil {
		return err
	}
	tp, stopTracing, err := tracerFromEnv(ctx, log)
	if err != nil {
		return err
	}
	defer flushTraces(log, stopTracing)
	stores, err := o.openStores(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := stores.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	store, path, nss := stores.store, stores.path, stores.namespaces
	l, cl, err := o.listen(ctx, log)
	if err != nil {
		return err
	}
	wfs := workflows.All()
	// The connection limits first, so that none of them can be left out.
	sopts := conn
	sopts.Store, sopts.Namespaces, sopts.Workflows, sopts.Logger = store, nss, wfs, log
	sopts.IdleTimeout, sopts.MaxIdleInMemory, sopts.Retention, sopts.Limits = o.idleTimeout, o.maxIdle, o.retention, o.limits
	sopts.TLSConfig, sopts.PeerTLS, sopts.TracerProvider, sopts.ShutdownDelay = tlsConfig, peerTLS, tp, o.shutdownDelay
	sopts.Console, sopts.Replica = console.Handler(nil), o.replicaAt(l.Addr())
	o.auth.apply(&sopts)
	srv, err := server.New(ctx, sopts)
	if err != nil {
		_ = l.Close()
		closeListener(cl)
		return explainStore(o.data, fmt.Errorf("start server: %w", err))
	}
	if o.debugAddr != "" {
		stopDebug, err := serveDebug(o.debugAddr, log)
		if err != nil {
			_ = l.Close()
			closeListener(cl)
			return err
		}
		defer stopDebug()
	}
	announce(log, l, cl, tlsConfig != nil)
	attrs := []any{"addr", l.Addr().String(), "store", path, "workflows", workflowNames(wfs), "tls", tlsConfig != nil}
	if len(nss) > 0 {
		attrs = append(attrs, "namespaces", "default,"+o.namespaces.String())
	}
	if o.replica.ID != "" {
		attrs = append(attrs, "replica", o.replica.ID, "advertise", sopts.Replica.Address)
	}
	log.Info("listening", attrs...)
	if err := srv.ServeWithConsole(ctx, l, cl, o.grace); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}

// validate checks the flags that need no file or network, before anything
// starts, and returns the connection limits (connLimits).
func (o *serveOptions) validate() (conn server.Options, err error) {
	if o.grace < 0 || o.shutdownDelay < 0 {
		return conn, usageErrorf("--grace and --shutdown-delay must not be negative")
	}
	if o.idleTimeout < 0 || o.maxIdle < 0 || o.gcHeadroomMiB < 0 || o.retention < 0 {
		return conn, usageErrorf("--idle-timeout, --max-idle-in-memory, --gc-headroom-mib and --retention must not be negative")
	}
	if o.gcMinPercent < 1 || o.gcMinPercent > gcpolicy.DefaultMaxPercent {
		return conn, usageErrorf("--gc-min-percent must be between 1 and %d", gcpolicy.DefaultMaxPercent)
	}
	for _, l := range []struct {
		flag string
		v    int
	}{{"max-children", o.limits.MaxChildren}, {"max-queued-events", o.limits.MaxQueuedEvents}, {"max-record-bytes", o.limits.MaxRecordBytes},
		{"max-store-bytes", o.limits.MaxStoreBytes}, {"max-payload-depth", o.limits.MaxPayloadDepth}, {"max-payload-bytes", o.limits.MaxPayloadBytes}} {
		if l.v <= 0 {
			return conn, usageErrorf("--%s must be positive", l.flag)
		}
	}
	if conn, err = o.connLimits(); err != nil {
		return conn, err
	}
	if o.replica.ID != "" && o.store == "" {
		return conn, usageErrorf("--replica-id needs a PostgreSQL --store: replicas share its database")
	}
	if o.replica.LeaseTTL < 30*time.Millisecond {
		return conn, usageErrorf("--lease-ttl must be at least 30ms")
	}
	return conn, nil
}

// flushTraces sends the traces still buffered when serve returns (stop is
// tracerFromEnv's shutdown; nil when tracing is off).
func flushTraces(log *slog.Logger, stop func(context.Context) error) {
	if stop == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := stop(ctx); err != nil {
		log.Warn("flushing traces", "err", err)
	}
}

// leaseTTL is how long the store's leases last: --lease-ttl for a replica,
// none for a single process.
func (o *serveOptions) leaseTTL() time.Duration {
	if o.replica.ID == "" {
		return 0
	}
	return o.replica.LeaseTTL
}

// replicaAt is server.Options.Replica for a server listening at addr: none
// without --replica-id, and addr the address it advertises unless
// --advertise-addr names one.
func (o *serveOptions) replicaAt(addr net.Addr) server.Replica {
	if o.replica.ID == "" {
		return server.Replica{}
	}
	r := o.replica
	if r.Address == "" {
		r.Address = addr.String()
	}
	return r
}

// listen opens the API's listener on --addr and the console's (nil
// without one, see listenConsole).
func (o *serveOptions) listen(ctx context.Context, log *slog.Logger) (l, cl net.Listener, err error) {
	var lc net.ListenConfig
	l, err = lc.Listen(ctx, "tcp", o.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen: %w", err)
	}
	cl, err = o.listenConsole(ctx, log)
	if err != nil {
		_ = l.Close()
		return nil, nil, err
	}
	return l, cl, nil
}

// announce logs, before "listening" (which tells scripts and tests that
// serve is up), a warning for each port served in plaintext beyond
// loopback and where the console is.
func announce(log *slog.Logger, l, cl net.Listener, tls bool) {
	if !tls && !isLoopback(l.Addr()) {
		log.Warn("serving plaintext on a non-loopback address: anyone on the network can read and alter the calls; use --tls-cert and --tls-key", "addr", l.Addr().String())
	}
	if cl == nil {
		return
	}
	if !tls && !isLoopback(cl.Addr()) {
		log.Warn("serving the console in plaintext on a non-loopback address: tokens typed into it cross the network readable; use --tls-cert and --tls-key", "addr", cl.Addr().String())
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	log.Info("console", "url", scheme+"://"+cl.Addr().String()+"/ui/", "addr", cl.Addr().String())
}

// workflowNames lists the names of wfs, for the log.
func workflowNames(wfs []engine.Workflow) []string {
	names := make([]string, len(wfs))
	for i, w := range wfs {
		names[i] = w.Name
	}
	return names
}

// connLimits turns the connection flags into server.Options fields (where 0
// means the default and negative none).
func (o *serveOptions) connLimits() (server.Options, error) {
	if o.maxConns < 0 || o.maxStreams < 1 || o.readBodyTimeout < 0 || o.minBodyRate < 0 || o.idleConnTimeout < 0 || o.pingTimeout < 0 {
		return server.Options{}, usageErrorf("--max-connections, --read-body-timeout, --min-body-rate, --idle-conn-timeout and --ping-timeout must not be negative, --max-streams-per-connection must be at least 1")
	}
	if o.streams.MemoryBytes < 1 || o.streams.BufferBytes < 1 || o.streams.SendTimeout <= 0 {
		return server.Options{}, usageErrorf("--max-stream-memory-bytes, --max-stream-buffer-bytes and --stream-send-timeout must be positive")
	}
	// A flag's 0 is "none"; the server's zero is its default.
	return server.Options{MaxConnections: orOff(o.maxConns), MaxStreamsPerConnection: o.maxStreams,
		ReadBodyTimeout: orOff(o.readBodyTimeout), MinBodyRate: orOff(o.minBodyRate), IdleConnTimeout: orOff(o.idleConnTimeout),
		PingTimeout: orOff(o.pingTimeout), Streams: o.streams}, nil
}

// orOff is v, or server.Off for 0.
func orOff[T int | time.Duration](v T) T {
	if v == 0 {
		return server.Off
	}
	return v
}

// listenConsole opens the console's listener (nil when --console-addr is
// empty). At its default address a port in use (another wfd, a test
// server) only skips the console, with a warning; an address given
// explicitly must be free.
func (o *serveOptions) listenConsole(ctx context.Context, log *slog.Logger) (net.Listener, error) {
	if o.consoleAddr == "" {
		return nil, nil
	}
	if _, _, err := net.SplitHostPort(o.consoleAddr); err != nil {
		return nil, usageErrorf("--console-addr %q: %v", o.consoleAddr, err)
	}
	var lc net.ListenConfig
	cl, err := lc.Listen(ctx, "tcp", o.consoleAddr)
	if err != nil {
		if !o.consoleAddrSet && errors.Is(err, syscall.EADDRINUSE) {
			log.Warn("console off: its default address is in use (set --console-addr)", "addr", o.consoleAddr)
			return nil, nil
		}
		return nil, fmt.Errorf("listen on --console-addr: %w", err)
	}
	return cl, nil
}

func closeListener(l net.Listener) {
	if l != nil {
		_ = l.Close()
	}
}
