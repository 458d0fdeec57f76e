package replicatest_test

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// proxy forwards TCP connections to the database, to cut a replica off
// from it in two ways. After blackhole it drops every byte either way
// (connections stay open, silent: a partition that loses packets). While
// held it delivers nothing either way and keeps what it read (the rest
// waits in the kernel's buffers), as a partition that TCP outlasts;
// release delivers it all, in order, a connection's end after its bytes.
type proxy struct {
	url string
	l   net.Listener

	mu   sync.Mutex
	cond *sync.Cond
	dead bool
	held bool
	open []net.Conn
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
	p.cond = sync.NewCond(&p.mu)
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
			p.open = append(p.open, c, s)
			p.mu.Unlock()
			go p.pipe(s, c)
			go p.pipe(c, s)
		}
	}()
	t.Cleanup(p.close)
	return p
}

// pass waits while the proxy is held and reports whether bytes may go
// through (not blackholed).
func (p *proxy) pass() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.held {
		p.cond.Wait()
	}
	return !p.dead
}

func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && p.pass() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				_ = src.Close()
				return
			}
		}
		if err != nil {
			if tc, ok := dst.(*net.TCPConn); ok && err == io.EOF && p.pass() {
				_ = tc.CloseWrite()
			} else if err != io.EOF {
				_ = dst.Close()
			}
			return
		}
	}
}

func (p *proxy) blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dead = true
}

func (p *proxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = true
}

func (p *proxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = false
	p.cond.Broadcast()
}

func (p *proxy) close() {
	p.release()
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.open {
		_ = c.Close()
	}
	p.open = nil
}
