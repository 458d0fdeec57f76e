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

// dialPeer dials a TLS server that serves srv and requires a client
// certificate of clientCA, with the configuration p gives for addr (the
// name of the server, with the listener's port); it returns the client's
// handshake error and the subject of the client certificate the server
// verified.
func dialPeer(t *testing.T, p *tlsfiles.Peer, host string, srv devcert.Pair, clientCA *devcert.CA) (string, error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	cfg := &tls.Config{Certificates: []tls.Certificate{must(srv.TLS())(t)}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clientCA.Pool()}
	subject := make(chan string, 1)
	go func() {
		sc, err := l.Accept()
		if err != nil {
			subject <- ""
			return
		}
		defer func() { _ = sc.Close() }()
		s := tls.Server(sc, cfg)
		if s.Handshake() != nil || len(s.ConnectionState().VerifiedChains) == 0 {
			subject <- ""
			return
		}
		subject <- s.ConnectionState().VerifiedChains[0][0].Subject.CommonName
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	ccfg, err := p.ClientConfig(net.JoinHostPort(host, port))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cc.Close() }()
	c := tls.Client(cc, ccfg)
	herr := c.Handshake()
	if herr == nil {
		// A TLS 1.3 client is done before the server has checked its
		// certificate: a read gets the server's verdict.
		_, herr = c.Read(make([]byte, 1))
		if herr == io.EOF {
			herr = nil
		}
	}
	return <-subject, herr
}

// TestPeerClientConfig: a replica dials another with the roots of the
// peer CA file (read again when it changes), checks the name the other's
// certificate holds against the host dialled (or ServerName when set),
// and presents its own certificate when asked.
func TestPeerClientConfig(t *testing.T) {
	oldCA, newCA := must(devcert.NewCA("old peer CA"))(t), must(devcert.NewCA("new peer CA"))(t)
	dir := t.TempDir()
	own := must(oldCA.Peer("127.0.0.1"))(t)
	certFile, keyFile := must2(own.Write(dir, "own"))(t)
	caFile := must(oldCA.WriteCA(dir, "peers"))(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	peer := must(tlsfiles.NewPeer(tlsfiles.PeerFiles{CA: caFile, Cert: certFile, Key: keyFile}, log))(t)
	named := must(tlsfiles.NewPeer(tlsfiles.PeerFiles{CA: caFile, Cert: certFile, Key: keyFile, ServerName: "wfd.internal"}, log))(t)
	oldSrv, newSrv := must(oldCA.Server("127.0.0.1"))(t), must(newCA.Server("127.0.0.1"))(t)
	shared := must(oldCA.Server("wfd.internal"))(t)

	for _, tc := range []struct {
		name string
		p    *tlsfiles.Peer
		host string
		srv  devcert.Pair
		ok   bool
	}{
		{"the advertised host in the certificate", peer, "127.0.0.1", oldSrv, true},
		{"another name in the certificate", peer, "127.0.0.1", shared, false},
		{"ServerName in the certificate", named, "127.0.0.1", shared, true},
		{"ServerName not in the certificate", named, "127.0.0.1", oldSrv, false},
		{"a certificate of another CA", peer, "127.0.0.1", newSrv, false},
	} {
		subject, err := dialPeer(t, tc.p, tc.host, tc.srv, oldCA)
		if (err == nil) != tc.ok {
			t.Fatalf("%s: handshake error %v, want ok=%v", tc.name, err, tc.ok)
		}
		if tc.ok && subject != "127.0.0.1" {
			t.Fatalf("%s: the server saw client certificate %q, want the replica's own (127.0.0.1)", tc.name, subject)
		}
	}

	if err := os.WriteFile(caFile, newCA.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := dialPeer(t, peer, "127.0.0.1", newSrv, oldCA); err != nil {
		t.Fatalf("after the CA file changed, a certificate of the new CA: %v", err)
	}
	if _, err := dialPeer(t, peer, "127.0.0.1", oldSrv, oldCA); err == nil {
		t.Fatal("after the CA file changed, a certificate of the old CA is still accepted")
	}
}

func must2[A, B any](a A, b B, err error) func(testing.TB) (A, B) {
	return func(t testing.TB) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}
