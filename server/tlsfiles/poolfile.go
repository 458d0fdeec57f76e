package tlsfiles

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// poolFile is a CA pool read from a PEM file and read again when the file
// changes (a rotated CA bundle, a mounted ConfigMap), as Reloader does for
// the server's pair: a version that does not load is logged once and the
// last good pool kept. The client CAs (caFile) and the peer CAs (Peer)
// are poolFiles.
type poolFile struct {
	name string
	what string // which CAs, for the log: "client", "peer"
	log  *slog.Logger

	mu     sync.Mutex
	pool   *x509.CertPool
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

// newPoolFile loads the pool now and fails if it does not load.
func newPoolFile(name, what string, log *slog.Logger) (*poolFile, error) {
	st, err := statFile(name)
	if err != nil {
		return nil, err
	}
	pool, err := LoadPool(name)
	if err != nil {
		return nil, err
	}
	return &poolFile{name: name, what: what, log: log, pool: pool, tried: st, racy: st.recent()}, nil
}

// current is the pool, read again first if the file changed. The same
// pointer is returned until the file holds other CAs.
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
			c.log.Error("tls: a CA file does not load; verifying against the previous CAs", "cas", c.what, "file", c.name, "err", err)
		}
		return c.pool
	}
	if !pool.Equal(c.pool) {
		c.pool = pool
		c.log.Info("tls: CAs reloaded", "cas", c.what, "file", c.name)
	}
	return c.pool
}
