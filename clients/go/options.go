package client

import (
	"crypto/tls"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Defaults of the options.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMaxAttempts    = 8
	DefaultInitialBackoff = 100 * time.Millisecond
	DefaultMaxBackoff     = 2 * time.Second
)

// Option configures a Client.
type Option func(*options)

// RetryPolicy says how often and after what pauses a unary call that failed
// with codes.Unavailable is tried again, and how often Stream reconnects
// without making progress before it gives up. The pause doubles from
// InitialBackoff up to MaxBackoff, with 20% jitter. Zero fields take the
// defaults; the defaults ride out about seven seconds without a server.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt: 1 disables retries.
	MaxAttempts int
	// InitialBackoff is the pause before the second attempt.
	InitialBackoff time.Duration
	// MaxBackoff caps the pause.
	MaxBackoff time.Duration
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = DefaultInitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = DefaultMaxBackoff
	}
	p.MaxBackoff = max(p.MaxBackoff, p.InitialBackoff)
	return p
}

type options struct {
	timeout  time.Duration
	retry    RetryPolicy
	creds    credentials.TransportCredentials
	token    string
	dialOpts []grpc.DialOption
	// namespace is WithNamespace's ("": the default one).
	namespace string
}

func defaultOptions() options {
	return options{timeout: DefaultTimeout, creds: insecure.NewCredentials()}
}

// WithTimeout sets the timeout of a unary call whose context has no
// deadline (default [DefaultTimeout]); 0 disables it. It covers the call's
// retries. Streams never get one.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = max(d, 0) }
}

// WithRetry sets the retry policy of unary calls and of Stream's reconnects.
func WithRetry(p RetryPolicy) Option {
	return func(o *options) { o.retry = p }
}

// WithTLS connects over TLS with cfg; a nil cfg verifies the server against
// the system's roots. The default is plaintext, which wfd serves.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) { o.creds = credentials.NewTLS(cfg) }
}

// WithBearerToken sends token with every call, unary and streaming, as
// "authorization: Bearer <token>". A token must not cross a network in
// plaintext: over plaintext Dial accepts it only for a loopback target
// (127.0.0.0/8, ::1, localhost, a unix socket: a local server, or a
// mesh sidecar that adds TLS), and fails otherwise; use WithTLS.
func WithBearerToken(token string) Option {
	return func(o *options) { o.token = token }
}

// WithTransportCredentials sets the transport credentials (for instance
// mutual TLS from credentials.NewTLS, or an ALTS or xDS implementation).
func WithTransportCredentials(c credentials.TransportCredentials) Option {
	return func(o *options) { o.creds = c }
}

// WithDialOptions adds grpc-go dial options after the client's own, for
// what this package does not cover: a custom dialer, per-RPC credentials,
// more interceptors (they run inside the timeout and retry interceptors,
// once per attempt).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOpts = append(o.dialOpts, opts...) }
}
