package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"

	client "github.com/wfd-dev/wfd/clients/go"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// testServer is a real wfd server on a loopback port over a real bbolt file.
type testServer struct {
	t    *testing.T
	dir  string
	addr string
	srv  *server.Server
	stop func() // shuts the server down and closes its store; idempotent
}

// startServer starts a server with the example workflows on the store in
// dir (a new one if not given), and stops it when the test ends.
func startServer(t *testing.T, dir ...string) *testServer {
	t.Helper()
	ts := &testServer{t: t, dir: t.TempDir()}
	if len(dir) > 0 {
		ts.dir = dir[0]
	}
	store, err := bolt.Open(filepath.Join(ts.dir, "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ts.srv, err = server.New(context.Background(), server.Options{
		Store: store, Workflows: workflows.All(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		_ = store.Close()
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = l.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.srv.Serve(ctx, l, 5*time.Second) }()
	ts.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if err := store.Close(); err != nil {
			t.Errorf("store Close: %v", err)
		}
	})
	t.Cleanup(ts.stop)
	return ts
}

// fastRetry keeps the tests' backoff short.
func fastRetry() client.Option {
	return client.WithRetry(client.RetryPolicy{MaxAttempts: 10, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
}

// dial returns a client of addr, closed when the test ends.
func dial(t *testing.T, addr string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.Dial(addr, append([]client.Option{fastRetry()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	t.Cleanup(cancel)
	return ctx
}

// drain reads a stream to its end and fails the test on an error.
func drain(t *testing.T, c *client.Client, id string, after uint64) []*wfdv1.Record {
	t.Helper()
	var out []*wfdv1.Record
	for rec, err := range c.Stream(ctxT(t), id, after, client.StreamInternal()) {
		if err != nil {
			t.Fatalf("stream %s: %v", id, err)
		}
		out = append(out, rec)
	}
	return out
}

// waitIdle polls until the handler is idle.
func waitIdle(t *testing.T, c *client.Client, id string) *wfdv1.Handler {
	t.Helper()
	var h *wfdv1.Handler
	testwait.Until(t, func() error {
		var err error
		if h, err = c.Get(ctxT(t), id); err != nil {
			t.Fatal(err)
		}
		if h.GetIdle() == nil {
			return fmt.Errorf("handler %s is not idle: %v", id, h)
		}
		return nil
	})
	return h
}

// checkSeqs fails unless recs are numbered from+1, from+2, ... and the last
// one is terminal.
func checkSeqs(t *testing.T, recs []*wfdv1.Record, from uint64) {
	t.Helper()
	if len(recs) == 0 {
		t.Fatal("no records")
	}
	for i, r := range recs {
		if want := from + uint64(i) + 1; r.GetSeq() != want {
			t.Fatalf("record %d has seq %d, want %d", i, r.GetSeq(), want)
		}
	}
	if recs[len(recs)-1].GetHandlerFinished() == nil {
		t.Fatalf("last record %v is not terminal", recs[len(recs)-1])
	}
}

// calls counts the RPCs (attempts, not calls: it runs inside the retry
// interceptor) by method.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) get(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

func (c *calls) add(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[method]++
}

func (c *calls) option() client.Option {
	return client.WithDialOptions(
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			c.add(method)
			return invoker(ctx, method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			c.add(method)
			return streamer(ctx, desc, cc, method, opts...)
		}),
	)
}
