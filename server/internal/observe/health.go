package observe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"github.com/google/uuid"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

const (
	// HealthProbeTimeout bounds the store read behind a health check, so
	// that a stuck store makes the check say NOT_SERVING instead of hanging.
	HealthProbeTimeout = 2 * time.Second
	// commitProbeEvery is how often a server whose commits fail tries a
	// commit of its own, to say SERVING again once the store can commit
	// (a drained server gets no calls whose commits would tell it).
	commitProbeEvery = time.Second
	// maxProbeBytes caps the payload of a probe commit.
	maxProbeBytes = 4 << 20
)

// Health answers grpc.health.v1 for the process ("") and the workflow
// service. It says SERVING while the server runs, its store answers a read
// and its last commit succeeded, and NOT_SERVING once shutdown has begun,
// while commits fail (a full disk, an I/O error, a store closed by a
// failed reopen) or when a read fails, so that a load balancer sends calls
// elsewhere until the store can commit again. Watch streams follow
// shutdown and commit failures; at shutdown they send NOT_SERVING and end
// with Unavailable, so a watcher knows to look again (elsewhere or later).
type Health struct {
	store persistence.Store
	log   *slog.Logger

	// failing is set while commits fail (read without the lock on every
	// commit).
	failing atomic.Bool

	mu       sync.Mutex
	leaving  bool // the shutdown delay: NOT_SERVING, calls still served
	stopping bool
	probing  bool          // a probe goroutine runs
	since    time.Time     // when commits began to fail
	need     int           // bytes of the largest commit that failed since
	leftover string        // a probe handler written and not yet deleted
	flaps    *LogThrottle  // the "cannot commit" lines
	warned   bool          // the last "cannot commit" line went out
	changed  chan struct{} // closed and replaced on every change
	done     chan struct{} // closed at shutdown: stops the commit probe
}

func NewHealth(store persistence.Store, log *slog.Logger) *Health {
	return &Health{store: store, log: log, changed: make(chan struct{}), done: make(chan struct{}),
		flaps: NewLogThrottle(FailureLogEvery, time.Now)}
}

// changes returns a channel closed at the next change of status.
func (h *Health) changes() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// notifyLocked wakes the watchers; h.mu is held.
func (h *Health) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// Leave makes every check say NOT_SERVING from now on, for the shutdown
// delay: load balancers stop sending calls while the server still serves
// them. Watch streams send NOT_SERVING and stay open until shutdown.
func (h *Health) Leave() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.leaving {
		return
	}
	h.leaving = true
	h.notifyLocked()
}

func (h *Health) IsLeaving() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.leaving || h.stopping
}

// Shutdown makes every check say NOT_SERVING from now on and ends the
// Watch streams.
func (h *Health) Shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopping {
		return
	}
	h.stopping = true
	close(h.done)
	h.notifyLocked()
}

func (h *Health) isStopping() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stopping
}

// Committed is told the outcome of every commit of handler changes: err is
// nil when it succeeded, or why the store could not commit; size is the
// bytes of the changes. Errors that concern a change rather than the store
// (a conflict, invalid data) are not the store's health and are not
// passed here. A commit ends the failure only if it is as large as the
// largest that failed: on a full disk smaller ones may still fit in the
// store's free pages while the calls' commits fail.
func (h *Health) Committed(err error, size int) {
	if err == nil && !h.failing.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil && h.failing.Load():
		h.need = max(h.need, size)
	case err != nil:
		h.failing.Store(true)
		h.since, h.need = time.Now(), size
		// A store at the edge of full may fail and succeed in turn:
		// one pair of lines per interval, the next counting the rest.
		if ok, suppressed := h.flaps.Allow(); ok {
			h.warned = true
			h.log.Warn("store cannot commit; health is NOT_SERVING until it can", "err", err, "suppressed", suppressed)
		}
		h.notifyLocked()
		if !h.stopping && !h.probing {
			h.probing = true
			go h.probe()
		}
	case size >= min(h.need, maxProbeBytes):
		h.failing.Store(false)
		if h.warned {
			h.warned = false
			h.log.Info("store commits again; health is SERVING", "after", time.Since(h.since).Round(time.Millisecond))
		}
		h.notifyLocked()
	}
}

// WhenCommitting waits until commits succeed (none has failed since the
// last that succeeded); false if ctx ends first.
func (h *Health) WhenCommitting(ctx context.Context) bool {
	for {
		changed := h.changes()
		if !h.failing.Load() {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// probe tries a commit every commitProbeEvery while commits fail, until
// one succeeds (a probe's, or a call's) or the server shuts down.
func (h *Health) probe() {
	t := time.NewTicker(commitProbeEvery)
	defer t.Stop()
	for h.keepProbing() {
		select {
		case <-h.done:
		case <-t.C:
			h.mu.Lock()
			need := h.need
			h.mu.Unlock()
			if err := h.probeCommit(need); err == nil || errors.Is(err, persistence.ErrUnavailable) {
				h.Committed(err, min(need, maxProbeBytes))
			}
		}
	}
}

// keepProbing reports whether the probe must go on, and if not marks it
// ended (under the lock, so that a new failure starts another).
func (h *Health) keepProbing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probing = h.failing.Load() && !h.stopping
	return h.probing
}

// probeCommit commits a handler with a snapshot of size bytes (capped),
// then deletes it in a second commit. Its size is that of the largest
// commit that failed: a small commit may fit in the pages the store has
// free while the ones that failed still cannot, and a probe that said
// SERVING then would only send the calls back to fail again. (Within one
// commit the delete would keep the snapshot from ever being written.) The
// handler has a random id and is finished, so a probe handler left by a
// failed delete, or by a crash between the two commits, is inert: the
// next probe deletes it, or it stays as a cancelled handler of workflow
// "wfd-health-probe".
func (h *Health) probeCommit(size int) error {
	ctx, cancel := context.WithTimeout(context.Background(), HealthProbeTimeout)
	defer cancel()
	h.mu.Lock()
	left := h.leftover
	h.mu.Unlock()
	if left != "" {
		if err := h.deleteProbe(ctx, left); err != nil {
			return err
		}
	}
	id := "wfd-health-probe-" + uuid.NewString()
	err := h.store.Write(ctx, persistence.Change{Create: true, Snapshot: make([]byte, min(size, maxProbeBytes)), Handler: persistence.Handler{
		ID: id, Workflow: "wfd-health-probe", Status: persistence.StatusCancelled, Residency: persistence.ResidencyReleased,
	}})
	if err != nil {
		return err
	}
	return h.deleteProbe(ctx, id)
}

// deleteProbe deletes a probe handler, or keeps its id to try again.
func (h *Health) deleteProbe(ctx context.Context, id string) error {
	err := h.store.Write(ctx, persistence.Change{Delete: true, Handler: persistence.Handler{ID: id}})
	if errors.Is(err, persistence.ErrNotFound) {
		err = nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.leftover = ""
	if err != nil {
		h.leftover = id
	}
	return err
}

// status is the status of service: NotFound for a service the server does
// not have.
func (h *Health) status(ctx context.Context, service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
	if service != "" && service != wfdv1connect.WorkflowServiceName {
		return 0, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %s", service))
	}
	if h.IsLeaving() || h.failing.Load() {
		return healthpb.HealthCheckResponse_NOT_SERVING, nil
	}
	ctx, cancel := context.WithTimeout(ctx, HealthProbeTimeout)
	defer cancel()
	if _, err := h.store.Count(ctx); err != nil && (errors.Is(err, persistence.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)) {
		return healthpb.HealthCheckResponse_NOT_SERVING, nil
	}
	return healthpb.HealthCheckResponse_SERVING, nil
}

// Handler serves grpc.health.v1.Health (Check and Watch).
func (h *Health) Handler(opts ...connect.HandlerOption) (string, http.Handler) {
	const (
		prefix = "/" + grpchealth.HealthV1ServiceName + "/"
		check  = prefix + "Check"
		watch  = prefix + "Watch"
	)
	mux := http.NewServeMux()
	mux.Handle(check, connect.NewUnaryHandler(check, h.check, opts...))
	mux.Handle(watch, connect.NewServerStreamHandler(watch, h.watch, opts...))
	return prefix, mux
}

func (h *Health) check(ctx context.Context, req *connect.Request[healthpb.HealthCheckRequest]) (*connect.Response[healthpb.HealthCheckResponse], error) {
	st, err := h.status(ctx, req.Msg.GetService())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&healthpb.HealthCheckResponse{Status: st}), nil
}

// watch sends the status, then every change of it, until the client
// leaves or the server shuts down: then it ends with Unavailable, after
// NOT_SERVING.
func (h *Health) watch(ctx context.Context, req *connect.Request[healthpb.HealthCheckRequest], out *connect.ServerStream[healthpb.HealthCheckResponse]) error {
	var last healthpb.HealthCheckResponse_ServingStatus
	for first := true; ; first = false {
		// Take the channel before reading the status: a change after the
		// read closes it. Shutdown is for good, so a status read after
		// stopping was seen is NOT_SERVING.
		changed := h.changes()
		stopping := h.isStopping()
		st, err := h.status(ctx, req.Msg.GetService())
		if err != nil {
			return err
		}
		if first || st != last {
			if err := out.Send(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			last = st
		}
		if stopping {
			return apierr.ToConnect(fmt.Errorf("%w: server is shutting down", apierr.ErrUnavailable))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// Failing reports whether the store's last commits failed.
func (h *Health) Failing() bool { return h.failing.Load() }
