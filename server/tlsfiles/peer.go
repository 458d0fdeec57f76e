package tlsfiles

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
)

// PeerFiles name the PEM files a replica dials the other replicas with
// (forwarded calls, server/internal/replica/forward.go).
type PeerFiles struct {
	// CA holds the roots the other replicas' server certificates must
	// chain to; read again when it changes. Empty: the system's roots
	// (which honour SSL_CERT_FILE and SSL_CERT_DIR).
	CA string
	// Cert and Key are the certificate presented when the other replica
	// asks for one (mTLS): the replica's own server pair, reloaded as it
	// changes. Its extended key usage must allow clientAuth.
	Cert, Key string
	// ServerName, when set, is the name every replica's certificate is
	// checked against; empty: the host of the address dialled (the
	// replica's advertised address).
	ServerName string
}

// Peer makes the TLS configurations of connections to other replicas.
type Peer struct {
	serverName string
	cert       *Reloader
	ca         *poolFile // nil: the system's roots
}

// NewPeer loads the files now and fails if they do not load.
func NewPeer(f PeerFiles, log *slog.Logger) (*Peer, error) {
	if log == nil {
		log = slog.Default()
	}
	p := &Peer{serverName: f.ServerName}
	if f.Cert != "" || f.Key != "" {
		r, err := NewReloader(f.Cert, f.Key, log)
		if err != nil {
			return nil, err
		}
		p.cert = r
	}
	if f.CA != "" {
		ca, err := newPoolFile(f.CA, "peer", log)
		if err != nil {
			return nil, err
		}
		p.ca = ca
	}
	return p, nil
}

// ClientConfig returns the configuration to dial the replica at addr
// (host:port) with: the current roots, the server name, the client
// certificate. Call it for each new connection, so that changed files
// reach it.
func (p *Peer) ClientConfig(addr string) (*tls.Config, error) {
	name := p.serverName
	if name == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, errors.New("tls: peer address " + addr + " is not host:port")
		}
		name = host
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: name, NextProtos: []string{"h2"}}
	if p.ca != nil {
		cfg.RootCAs = p.ca.current()
	}
	if p.cert != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return p.cert.GetCertificate(nil)
		}
	}
	return cfg, nil
}
