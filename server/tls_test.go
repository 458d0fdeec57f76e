package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1grpc"
	"github.com/wfd-dev/wfd/internal/devcert"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/internal/testwait"
	"github.com/wfd-dev/wfd/server/tlsfiles"
)

// pki is a CA with a server certificate for 127.0.0.1 and localhost and
// a client certificate, all made for the test.
type pki struct {
	ca             *devcert.CA
	server, client devcert.Pair
}

func newPKI(t *testing.T) pki {
	t.Helper()
	ca, err := devcert.NewCA("wfd test CA")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Server("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := ca.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	return pki{ca: ca, server: srv, client: cl}
}

func tlsCert(t *testing.T, p devcert.Pair) tls.Certificate {
	t.Helper()
	c, err := p.TLS()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// protoRecorder records the HTTP version of each response.
type protoRecorder struct {
	rt     http.RoundTripper
	mu     sync.Mutex
	protos []string
}

func (p *protoRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := p.rt.RoundTrip(r)
	if err == nil {
		p.mu.Lock()
		p.protos = append(p.protos, res.Proto)
		p.mu.Unlock()
	}
	return res, err
}

func (p *protoRecorder) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.protos...)
}

// tlsHTTPClient speaks HTTP/2 (h2 by ALPN) or HTTP/1.1 over TLS.
func tlsHTTPClient(cfg *tls.Config, h2 bool) (*http.Client, *protoRecorder) {
	var p http.Protocols
	if h2 {
		p.SetHTTP2(true)
	} else {
		p.SetHTTP1(true)
	}
	// The transport adds its ALPN protocols to the config it is given.
	rec := &protoRecorder{rt: &http.Transport{TLSClientConfig: cfg.Clone(), Protocols: &p}}
	return &http.Client{Transport: rec}, rec
}

func TestTLSServesGRPCConnectAndGRPCWebOverHTTP2AndHTTP1(t *testing.T) {
	p := newPKI(t)
	ts := startServer(t, serverConfig{tlsConfig: &tls.Config{Certificates: []tls.Certificate{tlsCert(t, p.server)}}})
	roots := &tls.Config{RootCAs: p.ca.Pool()}

	t.Run("grpc-go", func(t *testing.T) {
		conn, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(credentials.NewTLS(roots)))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		res, err := wfdv1grpc.NewWorkflowServiceClient(conn).ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetWorkflows()) == 0 {
			t.Fatal("no workflows listed")
		}
	})
	for _, tc := range []struct {
		name  string
		h2    bool
		opts  []connect.ClientOption
		proto string
	}{
		{"connect over HTTP/2", true, nil, "HTTP/2.0"},
		{"grpc over HTTP/2", true, []connect.ClientOption{connect.WithGRPC()}, "HTTP/2.0"},
		{"connect over HTTP/1.1", false, nil, "HTTP/1.1"},
		{"grpcweb over HTTP/1.1", false, []connect.ClientOption{connect.WithGRPCWeb()}, "HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc, rec := tlsHTTPClient(roots, tc.h2)
			defer hc.CloseIdleConnections()
			c := wfdv1connect.NewWorkflowServiceClient(hc, "https://"+ts.addr, tc.opts...)
			if _, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{}); err != nil {
				t.Fatal(err)
			}
			if got := rec.seen(); len(got) != 1 || got[0] != tc.proto {
				t.Fatalf("responses came over %v, want %s", got, tc.proto)
			}
		})
	}
}

func TestTLSServerRefusesPlaintextClients(t *testing.T) {
	p := newPKI(t)
	ts := startServer(t, serverConfig{tlsConfig: &tls.Config{Certificates: []tls.Certificate{tlsCert(t, p.server)}}})

	t.Run("h2c", func(t *testing.T) {
		c := wfdv1connect.NewWorkflowServiceClient(ts.http, "http://"+ts.addr, connect.WithGRPC())
		if _, err := c.ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{}); err == nil {
			t.Fatal("a plaintext gRPC call to a TLS server succeeded")
		}
	})
	t.Run("grpc-go insecure", func(t *testing.T) {
		conn, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		if _, err := wfdv1grpc.NewWorkflowServiceClient(conn).ListWorkflows(ctxT(t), &wfdv1.ListWorkflowsRequest{}); err == nil {
			t.Fatal("a plaintext grpc-go call to a TLS server succeeded")
		}
	})
	t.Run("http/1.1", func(t *testing.T) {
		res, err := http.Post("http://"+ts.addr+"/"+wfdv1connect.WorkflowServiceName+"/ListWorkflows", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err) // Go's TLS server answers plain HTTP with a 400
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", res.StatusCode)
		}
	})
}

func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	other, err := devcert.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := other.Client("mallory")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		auth       tls.ClientAuthType
		withoutOK  bool
		strangerOK bool
	}{
		{tls.RequireAndVerifyClientCert, false, false},
		{tls.VerifyClientCertIfGiven, true, false},
	} {
		t.Run(mode.auth.String(), func(t *testing.T) {
			ts := startServer(t, serverConfig{tlsConfig: &tls.Config{
				Certificates: []tls.Certificate{tlsCert(t, p.server)}, ClientCAs: p.ca.Pool(), ClientAuth: mode.auth,
			}})
			for _, tc := range []struct {
				name  string
				certs []tls.Certificate
				ok    bool
			}{
				{"no certificate", nil, mode.withoutOK},
				{"certificate from another CA", []tls.Certificate{tlsCert(t, stranger)}, mode.strangerOK},
				{"certificate from the client CA", []tls.Certificate{tlsCert(t, p.client)}, true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					cfg := &tls.Config{RootCAs: p.ca.Pool()}
					if tc.certs != nil {
						// Send the certificate even if its CA is not one the
						// server asks for (Go's client would send none).
						cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &tc.certs[0], nil }
					}
					// The handshake itself: in TLS 1.3 the server's verdict
					// on the client's certificate arrives as an alert on the
					// first read.
					err := handshake(ts.addr, cfg)
					if tc.ok != (err == nil) {
						t.Fatalf("handshake: %v, want success %v", err, tc.ok)
					}
					if !tc.ok && !isCertAlert(err) {
						t.Fatalf("handshake failed with %v, want a TLS certificate alert", err)
					}
					conn, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
					if err != nil {
						t.Fatal(err)
					}
					defer func() { _ = conn.Close() }()
					ctx, cancel := context.WithTimeout(ctxT(t), testwait.Timeout)
					defer cancel()
					_, err = wfdv1grpc.NewWorkflowServiceClient(conn).ListWorkflows(ctx, &wfdv1.ListWorkflowsRequest{})
					if tc.ok != (err == nil) {
						t.Fatalf("call: %v, want success %v", err, tc.ok)
					}
				})
			}
		})
	}
}

// handshake connects with cfg, completes the handshake and reads until
// the server has had its say about the client's certificate: the server
// speaks first after an HTTP/2 handshake (its SETTINGS frame).
func handshake(addr string, cfg *tls.Config) error {
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2"}
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	_, err = c.Read(make([]byte, 1))
	return err
}

func isCertAlert(err error) bool {
	var alert tls.AlertError
	if errors.As(err, &alert) {
		return true
	}
	// Before TLS 1.3 the error is the alert's text.
	return err != nil && strings.Contains(err.Error(), "certificate")
}

func TestTLSCertificateReloadsWhenTheFilesChange(t *testing.T) {
	p := newPKI(t)
	dir := t.TempDir()
	certFile, keyFile, err := p.server.Write(dir, "server")
	if err != nil {
		t.Fatal(err)
	}
	logs := &testlog.Buffer{}
	log := slogTo(logs)
	cfg, err := tlsfiles.ServerConfig(tlsfiles.Files{Cert: certFile, Key: keyFile}, log)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, serverConfig{tlsConfig: cfg, logger: log})
	serial := func() string {
		t.Helper()
		c, err := tls.Dial("tcp", ts.addr, &tls.Config{RootCAs: p.ca.Pool()})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	if got := serial(); got != p.server.Serial.String() {
		t.Fatalf("served serial %s, want %s", got, p.server.Serial)
	}

	renewed, err := p.ca.Server("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := renewed.Write(dir, "server"); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "a new connection gets the renewed certificate", func() bool { return serial() == renewed.Serial.String() })

	// A broken certificate file: logged, and the renewed pair still served.
	if err := os.WriteFile(certFile, []byte("-----BEGIN CERTIFICATE-----\nbroken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the broken certificate is logged", func() bool {
		return serial() == renewed.Serial.String() && strings.Contains(logs.String(), "do not load")
	})
	if got := serial(); got != renewed.Serial.String() {
		t.Fatalf("after a broken file: served serial %s, want %s (the last good one)", got, renewed.Serial)
	}
}

// A client verifying the server's certificate refuses one from an unknown
// CA (the roots are the test CA, not the system's).
func TestTLSClientRefusesAServerFromAnotherCA(t *testing.T) {
	p := newPKI(t)
	ts := startServer(t, serverConfig{tlsConfig: &tls.Config{Certificates: []tls.Certificate{tlsCert(t, p.server)}}})
	other, err := devcert.NewCA("another CA")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tls.Dial("tcp", ts.addr, &tls.Config{RootCAs: other.Pool()})
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("dial: %v, want an unknown authority error", err)
	}
}

func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
