package cli

import (
	"crypto/tls"
	"log/slog"
	"net"

	"github.com/wfd-dev/wfd/server/tlsfiles"
)

// tlsConfig builds the server's TLS configuration from the --tls-* flags:
// nil (plaintext) without --tls-cert and --tls-key.
func (o *serveOptions) tlsConfig(log *slog.Logger) (*tls.Config, error) {
	f := o.tls
	if f.Cert == "" && f.Key == "" {
		if f.ClientCA != "" {
			return nil, usageErrorf("--tls-client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	if f.Cert == "" || f.Key == "" {
		return nil, usageErrorf("--tls-cert and --tls-key go together")
	}
	if f.ClientCA != "" {
		f.ClientAuth = tlsfiles.ClientAuth(o.clientAuth.value)
	}
	return tlsfiles.ServerConfig(f, log)
}

// isLoopback reports whether a listener's address is a loopback one (an
// unspecified address such as 0.0.0.0 listens on every interface).
func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// peerTLS is server.Options.PeerTLS, how this replica dials the others to
// forward calls: with TLS when it serves TLS, trusting --peer-ca (default
// the --tls-client-ca, else the system's roots), checking their names
// against their advertised hosts (or --peer-server-name), and presenting
// its own --tls-cert when they ask for a client certificate. nil outside
// replica mode or without TLS. It also checks the --peer-* flags.
func (o *serveOptions) peerTLS(log *slog.Logger) (func(string) (*tls.Config, error), error) {
	if (o.peer.CA != "" || o.peer.ServerName != "" || o.auth.peerSecret != "") && o.replica.ID == "" {
		return nil, usageErrorf("--peer-ca, --peer-server-name and --peer-secret-file need --replica-id: they are how replicas call each other")
	}
	if (o.peer.CA != "" || o.peer.ServerName != "") && o.tls.Cert == "" {
		return nil, usageErrorf("--peer-ca and --peer-server-name need --tls-cert and --tls-key: replicas dial each other with TLS when they serve it")
	}
	if o.auth.peerSecret == "" && o.auth.authn != nil && o.tls.ClientCA != "" && o.replica.ID != "" {
		log.Warn("replica mode with client certificates but no --peer-secret-file: a call authenticated by its client certificate is not forwarded to the replica that owns its handler, but refused naming it")
	}
	if o.tls.Cert == "" || o.replica.ID == "" {
		return nil, nil
	}
	f := o.peer
	f.Cert, f.Key = o.tls.Cert, o.tls.Key
	if f.CA == "" {
		f.CA = o.tls.ClientCA
	}
	p, err := tlsfiles.NewPeer(f, log)
	if err != nil {
		return nil, err
	}
	return p.ClientConfig, nil
}
