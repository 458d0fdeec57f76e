// Package tlsfiles builds a server's tls.Config from certificate files and
// keeps its certificate and client CAs current: each handshake stats the certificate and
// key files (two stat calls, no reads) and loads them again when either
// changed, so a renewed certificate (cert-manager, certbot, a mounted
// Secret) is served to new connections without a restart. A pair that
// does not load (a half-written file, a key that does not match) is
// logged and the last good pair is served until the files change again.
package tlsfiles

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"
)

// ClientAuth says whether clients must present a certificate.
type ClientAuth string

// The client authentication modes; both verify a certificate against the
// client CA when one is given.
const (
	// Require refuses a handshake without a valid client certificate.
	Require ClientAuth = "require"
	// VerifyIfGiven lets clients without a certificate in (to
	// authenticate otherwise, e.g. with a bearer token).
	VerifyIfGiven ClientAuth = "verify-if-given"
)

// Files name the PEM files of a server's TLS set-up.
type Files struct {
	// Cert and Key are the server's certificate (chain) and private key.
	Cert, Key string
	// ClientCA, when set, holds the CAs that client certificates are
	// verified against (mTLS); read again when it changes.
	ClientCA string
	// ClientAuth applies with ClientCA; empty means Require.
	ClientAuth ClientAuth
}

// ServerConfig returns a tls.Config (TLS 1.2 or later) serving the pair in
// f.Cert and f.Key, reloaded as they change, and verifying clients against
// f.ClientCA if set. It fails if the pair or the CA file do not load now.
func ServerConfig(f Files, log *slog.Logger) (*tls.Config, error) {
	r, err := NewReloader(f.Cert, f.Key, log)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
	if f.ClientCA == "" {
		if f.ClientAuth != "" {
			return nil, errors.New("tls: a client auth mode needs a client CA file")
		}
		return cfg, nil
	}
	switch f.ClientAuth {
	case "", Require:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case VerifyIfGiven:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		return nil, fmt.Errorf("tls: client auth %q is not %q or %q", f.ClientAuth, Require, VerifyIfGiven)
	}
	ca, err := newCAFile(f.ClientCA, cfg, log)
	if err != nil {
		return nil, err
	}
	cfg.ClientCAs = ca.config.ClientCAs
	cfg.GetConfigForClient = ca.getConfigForClient
	return cfg, nil
}

// LoadPool reads a PEM file of CA certificates.
func LoadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tls: read CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls: no PEM certificate in %s", file)
	}
	return pool, nil
}

// stamp identifies a version of the two files.
type stamp struct {
	certMod, keyMod   time.Time
	certSize, keySize int64
}

// Reloader serves a certificate and key pair from files, loading them
// again when they change.
type Reloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu      sync.Mutex
	current *tls.Certificate
	tried   stamp // the files' stamp at the last load, good or not
	// racy: a file changed so recently when last loaded that it could
	// change again with the same stamp (file times have a coarse tick,
	// and a renewed PEM file often has the same size); until it settles
	// every handshake loads the files again.
	racy   bool
	logged stamp // the stamp whose failure was logged, to log it once
}

// settle is how long after its last change a file's stamp is trusted.
const settle = 2 * time.Second

// NewReloader loads the pair now and fails if it does not load.
func NewReloader(certFile, keyFile string, log *slog.Logger) (*Reloader, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("tls: both a certificate and a key file are needed")
	}
	if log == nil {
		log = slog.Default()
	}
	r := &Reloader{certFile: certFile, keyFile: keyFile, log: log}
	st, err := r.stat()
	if err != nil {
		return nil, err
	}
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: load %s and %s: %w", certFile, keyFile, err)
	}
	r.current, r.tried, r.racy = &c, st, st.recent()
	return r, nil
}

// GetCertificate is a tls.Config.GetCertificate: it returns the current
// pair, loading the files first if they changed since the last attempt.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, err := r.stat()
	if err != nil || (st == r.tried && !r.racy) {
		// A file missing for a moment (replaced by a rename) keeps the
		// current pair; the next handshake looks again.
		return r.current, nil
	}
	changed := st != r.tried
	r.tried, r.racy = st, st.recent()
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		if r.logged != st {
			r.logged = st
			r.log.Error("tls: new certificate files do not load; serving the previous certificate", "cert", r.certFile, "key", r.keyFile, "err", err)
		}
		return r.current, nil
	}
	if !changed && r.current != nil && slices.EqualFunc(c.Certificate, r.current.Certificate, bytes.Equal) {
		return r.current, nil
	}
	r.current = &c
	r.log.Info("tls: certificate reloaded", "cert", r.certFile, "subject", subject(&c), "not_after", notAfter(&c))
	return r.current, nil
}

func (r *Reloader) stat() (stamp, error) {
	ci, err := os.Stat(r.certFile)
	if err != nil {
		return stamp{}, fmt.Errorf("tls: %w", err)
	}
	ki, err := os.Stat(r.keyFile)
	if err != nil {
		return stamp{}, fmt.Errorf("tls: %w", err)
	}
	return stamp{certMod: ci.ModTime(), keyMod: ki.ModTime(), certSize: ci.Size(), keySize: ki.Size()}, nil
}

func (s stamp) recent() bool {
	return time.Since(s.certMod) < settle || time.Since(s.keyMod) < settle
}

func subject(c *tls.Certificate) string {
	if c.Leaf == nil {
		return ""
	}
	return c.Leaf.Subject.String()
}

func notAfter(c *tls.Certificate) time.Time {
	if c.Leaf == nil {
		return time.Time{}
	}
	return c.Leaf.NotAfter
}
