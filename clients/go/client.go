package client

import (
	"fmt"
	"time"

	"github.com/wfd-dev/wfd/namespace"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/keepalive"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1grpc"
)

// maxRecvBytes matches the largest response the server sends.
const maxRecvBytes = 64 << 20

// keepaliveTime is how long a quiet connection waits before it pings the
// server; a peer that does not answer within keepaliveTimeout is dropped,
// and Stream reconnects.
const (
	keepaliveTime    = 30 * time.Second
	keepaliveTimeout = 10 * time.Second
)

// Client calls one wfd server. It is safe for concurrent use; make one and
// share it.
type Client struct {
	conn *grpc.ClientConn
	svc  wfdv1grpc.WorkflowServiceClient
	opts options
}

// Dial returns a client of the server at target, a gRPC target such as
// "127.0.0.1:7233" or "dns:///wfd.internal:7233". It does not wait for a
// connection: the first call connects, and a lost connection is made again
// on the next call.
func Dial(target string, opts ...Option) (*Client, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	o.retry = o.retry.withDefaults()
	if o.namespace != "" {
		if err := namespace.Check(o.namespace); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(o.creds),
		// Reconnect at the pace of the retries; grpc-go's own default
		// starts at one second and lets retries fail fast meanwhile.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay: o.retry.InitialBackoff, Multiplier: 2,
				Jitter: backoffJitter, MaxDelay: o.retry.MaxBackoff,
			},
			MinConnectTimeout: 20 * time.Second,
		}),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: keepaliveTimeout}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvBytes)),
		grpc.WithChainUnaryInterceptor(unaryInterceptors(&o)...),
	}
	if o.token != "" {
		creds, err := tokenCredentials(target, o.token, o.creds)
		if err != nil {
			return nil, err
		}
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(creds))
	}
	dialOpts = append(dialOpts, namespaceInterceptors(o.namespace)...)
	conn, err := grpc.NewClient(target, append(dialOpts, o.dialOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", target, err)
	}
	return &Client{conn: conn, svc: wfdv1grpc.NewWorkflowServiceClient(conn), opts: o}, nil
}

// Close closes the connection; calls in progress fail with codes.Canceled.
func (c *Client) Close() error {
	if err := c.conn.Close(); err != nil {
		return fmt.Errorf("client: close: %w", err)
	}
	return nil
}

// Service returns the generated stub behind the client, with the same
// timeout and retry interceptors, for calls this package does not wrap.
func (c *Client) Service() wfdv1grpc.WorkflowServiceClient { return c.svc }

// Conn returns the client's connection, with its timeout and retry
// interceptors, for other services of the server on the same connection
// (the worker package's WorkerService).
func (c *Client) Conn() grpc.ClientConnInterface { return c.conn }
