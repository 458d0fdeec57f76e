package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"sync"
)

// PeerFiles name the PEM files a replica dials the other replicas with
// (forwarded calls, server/forward.go).
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
		ca, err := newPoolFile(f.CA, log)
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

// poolFile is a CA pool read from a file and read again when the file
// changes; a version that does not load is logged once and the last good
// pool kept.
type poolFile struct {
	name string
	log  *slog.Logger

	mu     sync.Mutex
	pool   *x509.CertPool
	tried  fileStamp
	racy   bool
	logged fileStamp
}

func newPoolFile(name string, log *slog.Logger) (*poolFile, error) {
	st, err := statFile(name)
	if err != nil {
		return nil, err
	}
	pool, err := LoadPool(name)
	if err != nil {
		return nil, err
	}
	return &poolFile{name: name, log: log, pool: pool, tried: st, racy: st.recent()}, nil
}

func (c *poolFile) current() *x509.CertPool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := statFile(c.name)
	if err != nil || (st == c.tried && !c.racy) {
		return c.pool
	}
	c.tried, c.racy = st, st.recent()
	pool, err := LoadPool(c.name)
	if err != nil {
		if c.logged != st {
			c.logged = st
			c.log.Error("tls: the peer CA file does not load; verifying replicas against the previous CAs", "file", c.name, "err", err)
		}
		return c.pool
	}
	if !pool.Equal(c.pool) {
		c.pool = pool
		c.log.Info("tls: peer CAs reloaded", "file", c.name)
	}
	return c.pool
}
