package replica

// How the forwarder reaches the owner. Plaintext HTTP/2 when
// the server speaks plaintext; with Options.TLSConfig, TLS with
// Options.PeerTLS, which gives each new connection its configuration: the
// roots the owner's certificate must chain to (--peer-ca, by default the
// client CA with mTLS, else the system's), the name it must hold (the
// host of the owner's advertised address, or --peer-server-name), and,
// for an owner that asks for a client certificate (mTLS), this replica's
// own server certificate (which must therefore allow clientAuth). A
// server with TLS but no PeerTLS does not forward: the server's TLS
// settings say how to be a server, not whom to trust as a client.
//
// With tracing on, the clients carry otelconnect's interceptor: the
// forwarded call is a client span under the call being handled, and its
// traceparent makes the owner's spans part of the caller's trace.

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	"go.opentelemetry.io/otel/propagation"
)

// tlsOn reports whether forwarding dials TLS.
func (f *forwarder) tlsOn() bool { return f.tls }

// newHTTPClient is the client of every forwarded call: HTTP/2, cleartext
// or over TLS.
func (f *forwarder) newHTTPClient() *http.Client {
	var p http.Protocols
	if !f.tlsOn() {
		p.SetUnencryptedHTTP2(true)
		return &http.Client{Transport: &http.Transport{Protocols: &p, HTTP2: peerHealthCheck()}}
	}
	p.SetHTTP2(true)
	peer := f.peer
	return &http.Client{Transport: &http.Transport{Protocols: &p, ForceAttemptHTTP2: true, HTTP2: peerHealthCheck(),
		// A configuration per connection: files that changed (a renewed
		// certificate, a rotated CA) reach the next connection.
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			cfg, err := peer(addr)
			if err != nil {
				return nil, fmt.Errorf("forwarding to %s: %w", addr, err)
			}
			d := tls.Dialer{Config: cfg}
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, fmt.Errorf("forwarding to %s over TLS: %w", addr, err)
			}
			return c, nil
		}}}
}

// Health checks of the connections to other replicas: a connection that
// has received nothing for peerPingAfter is pinged, and closed if the
// ping is not answered in peerPingTimeout. A replica that is alive
// answers pings however busy its handlers are; one that is paused
// (SIGSTOP, a frozen VM) or cut off does not, and the calls forwarded
// to it fail (Unavailable, so they are retried and reach the replica
// that takes its handlers over) instead of hanging until their
// deadline.
const (
	peerPingAfter   = time.Second
	peerPingTimeout = time.Second
)

func peerHealthCheck() *http.HTTP2Config {
	return &http.HTTP2Config{SendPingTimeout: peerPingAfter, PingTimeout: peerPingTimeout}
}

// baseURL is the URL of the replica at addr.
func (f *forwarder) baseURL(addr string) string {
	if f.tlsOn() {
		return "https://" + addr
	}
	return "http://" + addr
}

// clientOptions trace forwarded calls when tracing is on.
func (f *forwarder) clientOptions() ([]connect.ClientOption, error) {
	if !f.tracing.On {
		return nil, nil
	}
	otel, err := otelconnect.NewInterceptor(otelconnect.WithTracerProvider(f.tracing.Provider()), otelconnect.WithoutMetrics(),
		otelconnect.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})))
	if err != nil {
		return nil, fmt.Errorf("server: tracing forwarded calls: %w", err)
	}
	return []connect.ClientOption{connect.WithInterceptors(otel)}, nil
}
