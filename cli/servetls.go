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
