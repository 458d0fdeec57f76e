package server_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/server"
	"github.com/wfd-dev/wfd/workflows"
)

// testServer is a real wfd server on a loopback port over a real bbolt file.
type testServer struct {
	t      testing.TB
	dir    string
	addr   string
	srv    *server.Server
	store  *bolt.Store
	cancel context.CancelFunc
	done   chan error
	// http is shared by the test's clients, so stop can close its idle
	// connections (HTTP/2 shutdown otherwise waits a second for them).
	http *http.Client
	once sync.Once
}

type serverConfig struct {
	dir       string
	heartbeat time.Duration
	workflows []engine.Workflow
	maxBytes  int
	// idleTimeout and maxIdle set the release triggers.
	idleTimeout time.Duration
	maxIdle     int
	// reclaimAfter is Options.ReclaimAfter.
	reclaimAfter time.Duration
	// logger is Options.Logger (slog.Default() when nil).
	logger *slog.Logger
	// limits is Options.Limits.
	limits engine.Limits
	// now is Options.Now (time.Now when nil).
	now func() time.Time
	// linger is Options.Linger.
	linger time.Duration
	// pingTimeout is Options.PingTimeout.
	pingTimeout time.Duration
	// tlsConfig is Options.TLSConfig.
	tlsConfig *tls.Config
	// options, if set, adjusts the Options last (authentication, say).
	options func(*server.Options)
}

func startServer(t testing.TB, cfg serverConfig) *testServer {
	t.Helper()
	if cfg.dir == "" {
		cfg.dir = t.TempDir()
	}
	if cfg.workflows == nil {
		cfg.workflows = workflows.All()
	}
	store, err := bolt.Open(filepath.Join(cfg.dir, "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	opts := server.Options{
		Store: store, Workflows: cfg.workflows, Heartbeat: cfg.heartbeat, MaxMessageBytes: cfg.maxBytes,
		IdleTimeout: cfg.idleTimeout, MaxIdleInMemory: cfg.maxIdle, ReclaimAfter: cfg.reclaimAfter,
		Logger: cfg.logger, Limits: cfg.limits, Now: cfg.now, Linger: cfg.linger, PingTimeout: cfg.pingTimeout,
		TLSConfig: cfg.tlsConfig,
	}
	if cfg.options != nil {
		cfg.options(&opts)
	}
	srv, err := server.New(context.Background(), opts)
	if err != nil {
		_ = store.Close() // the server's error is the one to report
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{t: t, dir: cfg.dir, addr: l.Addr().String(), srv: srv, store: store, cancel: cancel, done: make(chan error, 1), http: h2cClient()}
	go func() { ts.done <- srv.Serve(ctx, l, 5*time.Second) }()
	t.Cleanup(ts.stop)
	return ts
}

// stop shuts the server down gracefully and closes its store; it may be
// called more than once, from any goroutine.
func (ts *testServer) stop() {
	ts.once.Do(func() {
		ts.http.CloseIdleConnections()
		ts.cancel()
		if err := <-ts.done; err != nil {
			ts.t.Errorf("Serve: %v", err)
		}
		if err := ts.store.Close(); err != nil {
			ts.t.Errorf("store Close: %v", err)
		}
	})
}

// protocols are the wire protocols every service test runs over.
var protocols = []struct {
	name string
	opts []connect.ClientOption
}{
	{"connect", nil},
	{"grpc", []connect.ClientOption{connect.WithGRPC()}},
	{"grpcweb", []connect.ClientOption{connect.WithGRPCWeb()}},
}

func (ts *testServer) client(opts ...connect.ClientOption) wfdv1connect.WorkflowServiceClient {
	return wfdv1connect.NewWorkflowServiceClient(ts.http, "http://"+ts.addr, opts...)
}

// h2cClient speaks plaintext HTTP/2, which gRPC needs.
func h2cClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

func st(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	t.Cleanup(cancel)
	return ctx
}

func wantCode(t *testing.T, err error, code connect.Code, contains string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", code)
	}
	if got := connect.CodeOf(err); got != code {
		t.Fatalf("code %v (%v), want %v", got, err, code)
	}
	var ce *connect.Error
	if contains != "" && (!errors.As(err, &ce) || !strings.Contains(ce.Message(), contains)) {
		t.Fatalf("message %q does not contain %q", err, contains)
	}
}

// collect reads a stream until it ends, returning its records.
func collect(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string, after uint64) []*wfdv1.Record {
	t.Helper()
	s, err := c.StreamEvents(ctxT(t), &wfdv1.StreamEventsRequest{HandlerId: id, AfterSeq: after, IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var out []*wfdv1.Record
	for s.Receive() {
		if r := s.Msg().GetRecord(); r != nil {
			out = append(out, r)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return out
}

// waitIdle polls until the handler is idle.
func waitIdle(t *testing.T, c wfdv1connect.WorkflowServiceClient, id string) *wfdv1.Handler {
	t.Helper()
	var h *wfdv1.Handler
	testwait.Until(t, func() error {
		res, err := c.GetHandler(ctxT(t), &wfdv1.GetHandlerRequest{HandlerId: id})
		if err != nil {
			t.Fatal(err)
		}
		if h = res.Handler; h.GetIdle() == nil {
			return fmt.Errorf("handler %s is not idle: %v", id, h)
		}
		return nil
	})
	return h
}

func errorsAs(err error, target **connect.Error) bool { return errors.As(err, target) }
