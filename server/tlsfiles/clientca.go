package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"sync"
)

// caFile serves the server's config with the client CA pool of a PEM file
// (poolFile: read again when it changes).
type caFile struct {
	pool *poolFile
	base *tls.Config // the config to serve, without its ClientCAs

	mu     sync.Mutex
	config *tls.Config // base with the current pool
}

// newCAFile loads the pool now and fails if it does not load. base is
// cloned for every new pool; its GetConfigForClient is not used.
func newCAFile(name string, base *tls.Config, log *slog.Logger) (*caFile, error) {
	pool, err := newPoolFile(name, "client", log)
	if err != nil {
		return nil, err
	}
	c := &caFile{pool: pool, base: base}
	c.config = c.with(pool.current())
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
// the current pool.
func (c *caFile) getConfigForClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	pool := c.pool.current()
	c.mu.Lock()
	defer c.mu.Unlock()
	if pool != c.config.ClientCAs {
		c.config = c.with(pool)
	}
	return c.config, nil
}
