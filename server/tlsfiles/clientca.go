package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// caFile serves the client CA pool from a PEM file, reading it again when
// it changes (a rotated CA bundle, a mounted ConfigMap), as Reloader does
// for the server's pair: a file that does not load is logged once and the
// last good pool kept.
type caFile struct {
	name string
	log  *slog.Logger
	base *tls.Config // the config to serve, without its ClientCAs

	mu     sync.Mutex
	config *tls.Config // base with the current pool
	tried  fileStamp
	racy   bool
	logged fileStamp
}

// fileStamp identifies a version of one file.
type fileStamp struct {
	mod  time.Time
	size int64
}

func statFile(name string) (fileStamp, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return fileStamp{}, fmt.Errorf("tls: %w", err)
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size()}, nil
}

func (s fileStamp) recent() bool { return time.Since(s.mod) < settle }

// newCAFile loads the pool now and fails if it does not load. base is
// cloned for every new pool; its GetConfigForClient is not used.
func newCAFile(name string, base *tls.Config, log *slog.Logger) (*caFile, error) {
	st, err := statFile(name)
	if err != nil {
		return nil, err
	}
	pool, err := LoadPool(name)
	if err != nil {
		return nil, err
	}
	c := &caFile{name: name, log: log, base: base, tried: st, racy: st.recent()}
	c.config = c.with(pool)
	return c, nil
}

func (c *caFile) with(pool *x509.CertPool) *tls.Config {
	cfg := c.base.Clone()
	cfg.ClientCAs = pool
	cfg.GetConfigForClient = nil
	// net/http adds the HTTP/2 protocol to the config it is given, not to
	// one returned here: say it.
	cfg.NextProtos = []string{"h2", "http/1.1"}
	return cfg
}

// getConfigForClient is a tls.Config.GetConfigForClient: the config with
// the current pool, read again first if the file changed.
func (c *caFile) getConfigForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := statFile(c.name)
	if err != nil || (st == c.tried && !c.racy) {
		return c.config, nil
	}
	c.tried, c.racy = st, st.recent()
	pool, err := LoadPool(c.name)
	if err != nil {
		if c.logged != st {
			c.logged = st
			c.log.Error("tls: the client CA file does not load; verifying clients against the previous CAs", "file", c.name, "err", err)
		}
		return c.config, nil
	}
	if pool.Equal(c.config.ClientCAs) {
		return c.config, nil
	}
	c.config = c.with(pool)
	c.log.Info("tls: client CAs reloaded", "file", c.name)
	return c.config, nil
}
