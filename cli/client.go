package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/namespace"
	"github.com/wfd-dev/wfd/server/tlsfiles"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// defaultAddr is where the server listens and the client connects unless
// told otherwise.
const defaultAddr = "127.0.0.1:7233"

// clientFlags are the flags every client command takes.
type clientFlags struct {
	addr    string
	timeout time.Duration
	tls     bool
	json    bool

	tlsCA, tlsCert, tlsKey string
	token                  string
	namespace              string
}

func addClientFlags(fs *flagSet) *clientFlags {
	f := &clientFlags{}
	fs.StringVar(&f.addr, "addr", defaultAddr, "the server's `host:port`")
	fs.DurationVar(&f.timeout, "timeout", client.DefaultTimeout, "time limit of the command's calls, retries included (0: none; streams have none)")
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS, verifying the server against the system's roots")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM `file` of the CAs to verify the server against, instead of the system's roots (implies --tls)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM `file` of a client certificate, for mutual TLS (implies --tls)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM `file` of the client certificate's key")
	fs.StringVar(&f.token, "token", "", "bearer `token` sent with every call (needs TLS unless the server is on a loopback address)")
	fs.StringVar(&f.namespace, "namespace", namespace.Default, "the `namespace` the command's calls are in (its handlers, workflows, tasks, schedules)")
	fs.BoolVar(&f.json, "json", false, "print protojson, one object per line")
	fs.fromEnv("addr", "timeout", "tls", "tls-ca", "tls-cert", "tls-key", "token", "namespace")
	fs.acceptGlobal(globalFlagNames()...)
	return f
}

// dial returns a client; the caller closes it.
func (f *clientFlags) dial() (*client.Client, error) {
	if f.addr == "" {
		return nil, usageErrorf("--addr is empty")
	}
	// The command bounds its calls itself (see bound), whether or not the
	// context it runs in has a deadline.
	opts := []client.Option{client.WithTimeout(0)}
	cfg, err := f.tlsConfig()
	if err != nil {
		return nil, err
	}
	// A mismatch of the TLS settings ends a call at once, saying what is
	// wrong, rather than being retried (conncheck.go).
	check := &connCheck{clientCert: f.tlsCert != ""}
	creds := insecure.NewCredentials()
	if cfg != nil {
		creds = credentials.NewTLS(cfg)
	}
	opts = append(opts, client.WithTransportCredentials(check.credentials(creds, cfg != nil)), client.WithDialOptions(check.dialOptions()...))
	if f.token != "" {
		opts = append(opts, client.WithBearerToken(f.token))
	}
	if err := namespace.Check(f.namespace); err != nil {
		return nil, usageErrorf("--namespace: %v", err)
	}
	opts = append(opts, client.WithNamespace(f.namespace))
	c, err := client.Dial(f.addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", f.addr, err)
	}
	return c, nil
}

// tlsConfig returns the client's TLS configuration, nil for plaintext:
// any of --tls, --tls-ca, --tls-cert, --tls-key dials TLS.
func (f *clientFlags) tlsConfig() (*tls.Config, error) {
	if !f.tls && f.tlsCA == "" && f.tlsCert == "" && f.tlsKey == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.tlsCA != "" {
		pool, err := tlsfiles.LoadPool(f.tlsCA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return nil, usageErrorf("--tls-cert and --tls-key go together")
	}
	if f.tlsCert != "" {
		pair, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("tls: load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// call dials, runs fn with ctx bounded by --timeout, and closes the client.
func (f *clientFlags) call(ctx context.Context, fn func(context.Context, *client.Client) error) error {
	c, err := f.dial()
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	cctx, cancel := f.bound(ctx)
	defer cancel()
	return fn(cctx, c)
}

// bound returns ctx limited by --timeout, for the command's unary calls.
func (f *clientFlags) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, f.timeout)
}

// printer returns the output for the --json choice.
func (f *clientFlags) printer(e *env) *printer {
	return &printer{w: e.stdout, json: f.json}
}
