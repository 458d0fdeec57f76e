package replicatest_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/internal/testlog"
	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestReplicaPartitionedDropsHandlers: a replica whose database stops
// answering (a partition: its packets are dropped, nothing is refused)
// cannot renew; it drops its handlers from memory before their leases can
// have expired, and another replica takes them over once they have.
func TestReplicaPartitionedDropsHandlers(t *testing.T) {
	direct := pgURL(t)
	p := startProxy(t, direct)
	var logs testlog.Buffer
	a := startReplicaOpts(t, p.url, "a", 900*time.Millisecond, true, slog.New(slog.NewTextHandler(&logs, nil)))
	b := startReplica(t, direct, "b", time.Minute)
	ctx := context.Background()
	if _, err := a.c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "h1"}); err != nil {
		t.Fatal(err)
	}
	refusedFor(t, b.incHere("h1"), a)

	p.blackhole()
	// a cannot be asked (its GetStats reads the store): its log says.
	testwait.For(t, "a drops h1", func() bool {
		return strings.Contains(logs.String(), `msg="leases not renewed for half their ttl; their handlers left memory" replica=a handlers=1`)
	})
	testwait.Until(t, func() error { return b.inc("h1") })
	if o := b.owner(t, "h1"); o != "b" {
		t.Fatalf("owner = %q, want b", o)
	}
	p.close() // a's shutdown fails fast instead of waiting for answers
}

// pgURL is a fresh database's URL.
func pgURL(t *testing.T) string {
	t.Helper()
	return pgtest.NewDatabase(t)
}

// proxy forwards TCP connections to the database until blackhole, after
// which it drops every byte either way (connections stay open, silent).
type proxy struct {
	url  string
	l    net.Listener
	dead atomic.Bool
	mu   sync.Mutex
	c    []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	backend := u.Host
	u.Host = l.Addr().String()
	p := &proxy{url: u.String(), l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", backend)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.c = append(p.c, c, s)
			p.mu.Unlock()
			go p.pipe(s, c)
			go p.pipe(c, s)
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.dead.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				_ = dst.Close()
			}
			return
		}
	}
}

func (p *proxy) blackhole() { p.dead.Store(true) }

func (p *proxy) close() {
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.c {
		_ = c.Close()
	}
	p.c = nil
}
