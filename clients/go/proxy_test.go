package client_test

import (
	"errors"
	"math"
	"net"
	"sync"
	"testing"
)

// proxy forwards TCP connections to a target and can cut them all, or
// refuse the next few, to play a flaky network between client and server.
type proxy struct {
	l      net.Listener
	target string
	wg     sync.WaitGroup

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	refuse   int // connections still to refuse
	budget   int // bytes a connection forwards to the client before it is cut; 0: no limit
	accepted int // connections forwarded
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = l.Close()
		p.sever()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

// sever closes every connection in flight.
func (p *proxy) sever() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// refuseNext makes the proxy close the next n connections at once.
func (p *proxy) refuseNext(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = n
}

// cutAfter makes every new connection end once it has forwarded n bytes
// to the client, in the middle of a message or not.
func (p *proxy) cutAfter(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.budget = n
}

// retarget sends new connections to target.
func (p *proxy) retarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
}

// forwarded is how many connections the proxy forwarded.
func (p *proxy) forwarded() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		p.mu.Lock()
		refused := p.refuse > 0
		if refused {
			p.refuse--
		}
		p.mu.Unlock()
		if refused {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		out, err := net.Dial("tcp", target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.accepted++
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(in, out, true)
		go p.pipe(out, in, false)
	}
}

// pipe copies from src to dst and closes both when either side ends, or
// when the budget of a connection to the client is spent.
func (p *proxy) pipe(dst, src net.Conn, toClient bool) {
	defer p.wg.Done()
	defer func() {
		_ = dst.Close()
		_ = src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}()
	p.mu.Lock()
	budget := p.budget
	p.mu.Unlock()
	if !toClient || budget <= 0 {
		budget = math.MaxInt
	}
	buf := make([]byte, 32<<10)
	for budget > 0 {
		n, err := src.Read(buf[:min(len(buf), budget)])
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			budget -= n
		}
		if err != nil {
			return
		}
	}
}
