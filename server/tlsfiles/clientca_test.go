package tlsfiles_test

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"

	"github.com/wfd-dev/wfd/internal/devcert"
	"github.com/wfd-dev/wfd/server/tlsfiles"
)

// handshake dials a TLS server with cfg over an in-memory connection,
// presenting client, and returns the handshake's error on the server side
// and the protocol both agreed on.
func handshake(t *testing.T, cfg *tls.Config, ca *devcert.CA, client devcert.Pair) (string, error) {
	t.Helper()
	cert, err := client.TLS()
	if err != nil {
		t.Fatal(err)
	}
	// A loopback connection, not net.Pipe: a TLS 1.3 server writes its
	// session tickets after the client is done, which an unbuffered pipe
	// would block.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	type result struct {
		proto string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		sc, err := l.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer func() { _ = sc.Close() }()
		srv := tls.Server(sc, cfg)
		err = srv.Handshake()
		done <- result{srv.ConnectionState().NegotiatedProtocol, err}
	}()
	cc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cc.Close() }()
	c := tls.Client(cc, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}})
	_ = c.Handshake()
	r := <-done
	return r.proto, r.err
}

// must returns v, or fails the test with err.
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// TestClientCAReloaded: a rotated client CA file is read again at the next
// handshake (a certificate of the old CA is refused, one of the new CA
// accepted), a file that does not load keeps the previous CAs, and the
// config keeps offering HTTP/2.
func TestClientCAReloaded(t *testing.T) {
	oldCA, newCA := must(devcert.NewCA("old client CA"))(t), must(devcert.NewCA("new client CA"))(t)
	pair := must(oldCA.Server("127.0.0.1"))(t)
	oldClient, newClient := must(oldCA.Client("alice"))(t), must(newCA.Client("bob"))(t)
	dir := t.TempDir()
	certFile, keyFile, err := pair.Write(dir, "server")
	if err != nil {
		t.Fatal(err)
	}
	caFile, err := oldCA.WriteCA(dir, "clients")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := tlsfiles.ServerConfig(tlsfiles.Files{Cert: certFile, Key: keyFile, ClientCA: caFile}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string, client devcert.Pair, wantOK bool) {
		t.Helper()
		proto, err := handshake(t, cfg, oldCA, client)
		if (err == nil) != wantOK {
			t.Fatalf("%s: handshake error %v, want ok=%v", step, err, wantOK)
		}
		if wantOK && proto != "h2" {
			t.Fatalf("%s: negotiated %q, want h2", step, proto)
		}
	}
	check("old CA in the file, old client", oldClient, true)
	check("old CA in the file, new client", newClient, false)

	if err := os.WriteFile(caFile, newCA.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	check("new CA in the file, old client", oldClient, false)
	check("new CA in the file, new client", newClient, true)

	if err := os.WriteFile(caFile, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("a broken file keeps the new CA", newClient, true)
	check("a broken file does not bring back the old CA", oldClient, false)
}
