package server_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
	"github.com/wfd-dev/wfd/persistence/faultstore"
	"github.com/wfd-dev/wfd/server"
)

// faultyServer is a real server over a real bbolt file seen through a
// faultstore double, so a test can break the store under it.
type faultyServer struct {
	fs     *faultstore.Store
	addr   string
	client wfdv1connect.WorkflowServiceClient
}

// startFaulty starts a server with opts over a double of a fresh bbolt
// store (opts.Store is set here); the store is closed after the server
// has stopped.
func startFaulty(t *testing.T, opts server.Options) *faultyServer {
	t.Helper()
	inner, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	fs := faultstore.New(inner)
	// Cleanups run last first: this one after the server has stopped.
	t.Cleanup(func() {
		if err := fs.Inner().Close(); err != nil {
			t.Errorf("store Close: %v", err)
		}
	})
	opts.Store = fs
	addr := serveWith(t, opts)
	hc := h2cClient()
	t.Cleanup(hc.CloseIdleConnections)
	return &faultyServer{fs: fs, addr: addr, client: wfdv1connect.NewWorkflowServiceClient(hc, "http://"+addr, connect.WithGRPC())}
}

// health returns the server's grpc.health.v1 status for the whole process.
func (f *faultyServer) health(t *testing.T) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	check := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](
		h2cClient(), "http://"+f.addr+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	res, err := check.CallUnary(ctxT(t), connect.NewRequest(&healthpb.HealthCheckRequest{}))
	if err != nil {
		t.Fatalf("health Check: %v", err)
	}
	return res.Msg.GetStatus()
}

// relay runs two steps: "first" at the start, then "second", which calls
// reached with the handler's id and completes. The journal gets a
// handler's first change (the one RunWorkflow waits for) when "first"
// starts, and the loop does not wait for a commit before it goes on, so
// once "second" is reached that change is in the journal's hands:
// committed, being committed, or queued. (With Options.Linger off: a
// lingering loop would hold the change back while steps run.)
func relay(reached func(id string)) engine.Workflow {
	return engine.Workflow{Name: "relay", Steps: []engine.Step{
		{Name: "first", Accepts: []string{engine.StartEvent}, Emits: []string{"next"},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				return sc.Send("next", nil)
			}},
		{Name: "second", Accepts: []string{"next"}, Emits: []string{engine.StopEvent},
			Run: func(_ context.Context, sc *engine.StepContext, _ engine.Event) error {
				reached(sc.HandlerID())
				return sc.Send(engine.StopEvent, nil)
			}},
	}}
}

// arrivals collects the ids relay reports and lets a test wait for a set
// of them.
type arrivals struct {
	mu      sync.Mutex
	ids     map[string]bool
	changed chan struct{}
}

func newArrivals() *arrivals {
	return &arrivals{ids: map[string]bool{}, changed: make(chan struct{})}
}

func (a *arrivals) reached(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ids[id] = true
	close(a.changed)
	a.changed = make(chan struct{})
}

// wait returns once every id has been reached, or fails t when ctx ends.
func (a *arrivals) wait(t *testing.T, ctx context.Context, ids ...string) {
	t.Helper()
	for {
		a.mu.Lock()
		missing := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return a.ids[id] })
		changed := a.changed
		a.mu.Unlock()
		if len(missing) == 0 {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("handlers %v never reached their second step", missing)
		}
	}
}

// gate holds the first call of wait until open; entered is closed when
// that call begins. Later calls pass. open may be called more than once.
type gate struct {
	first   sync.Once
	opened  sync.Once
	entered chan struct{}
	release chan struct{}
}

// newGate returns a gate that t opens when it ends at the latest, so that
// a failed test does not leave the server stuck in a held call.
func newGate(t *testing.T) *gate {
	g := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) wait() {
	held := false
	g.first.Do(func() { held = true; close(g.entered) })
	if held {
		<-g.release
	}
}

func (g *gate) open() { g.opened.Do(func() { close(g.release) }) }

// writeLog records, for each Write call, the ids of the handlers its
// changes touch.
type writeLog struct {
	mu    sync.Mutex
	calls [][]string
}

func (l *writeLog) add(changes []persistence.Change) []string {
	ids := make([]string, len(changes))
	for i := range changes {
		ids[i] = changes[i].Handler.ID
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, ids)
	return ids
}

func (l *writeLog) all() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// waitClosed waits until ch is closed, or fails t with what when ctx ends.
func waitClosed(t *testing.T, ctx context.Context, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-ctx.Done():
		t.Fatalf("gave up waiting for %s: %v", what, ctx.Err())
	}
}

// writeThrough returns a double of inner whose Writes go through write
// (which calls inner's Write for those it lets pass).
func writeThrough(inner persistence.Store, write func(ctx context.Context, changes ...persistence.Change) error) *faultstore.Store {
	fs := faultstore.New(inner)
	fs.Update(func(f *faultstore.Funcs) { f.WriteFunc = write })
	return fs
}

// heldStore is a real bolt store whose Writes, while hold is set, wait
// until release is closed (announcing the first on entered): a commit the
// test holds up.
type heldStore struct {
	real    *bolt.Store
	store   *faultstore.Store
	hold    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func newHeldStore(t *testing.T) *heldStore {
	t.Helper()
	real, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = real.Close() })
	h := &heldStore{real: real, entered: make(chan struct{}, 1), release: make(chan struct{})}
	h.store = writeThrough(real, func(ctx context.Context, changes ...persistence.Change) error {
		if h.hold.Load() {
			select {
			case h.entered <- struct{}{}:
			default:
			}
			<-h.release
		}
		return real.Write(ctx, changes...)
	})
	return h
}
