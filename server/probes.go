package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/wfd-dev/wfd/namespace"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/observe"
)

// metricsPath is where the API port serves the Prometheus metrics.
const metricsPath = "/metrics"

// probes add the plain HTTP endpoints for load balancers and
// Prometheus, beside gRPC health. They are open (no authentication), like
// gRPC health: they say nothing about handlers.
//
//   - GET /healthz: 200 "ok" while the process serves HTTP (liveness).
//   - GET /readyz: 200 "ok" while the stores (every namespace's) can
//     commit (the state gRPC health follows) and the server is not
//     draining; 503 with the reason otherwise (readiness).
//   - GET /metrics: the Prometheus metrics (internal/observe).
type probes struct {
	shutdown *shutdown
	health   *observe.Health
	// stores are the namespaces' stores, in the order of names.
	stores  []persistence.Store
	names   []string
	metrics *observe.Metrics
}

func (s probes) handle(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		plain(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if reason := s.notReady(r.Context()); reason != "" {
			plain(w, http.StatusServiceUnavailable, reason)
			return
		}
		plain(w, http.StatusOK, "ok")
	})
	mux.Handle("GET "+metricsPath, s.metrics.Handler())
}

// notReady says why the server should get no calls, or "" when it should.
func (s probes) notReady(ctx context.Context) string {
	switch {
	case s.shutdown.isDraining():
		return "draining: the server is shutting down"
	case s.health.IsLeaving():
		return "shutting down: still serving calls for the shutdown delay, then draining"
	case s.health.Failing():
		return "store cannot commit"
	}
	ctx, cancel := context.WithTimeout(ctx, observe.HealthProbeTimeout)
	defer cancel()
	for i, store := range s.stores {
		if _, err := store.Count(ctx); err != nil && (errors.Is(err, persistence.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)) {
			if s.names[i] != namespace.Default {
				return fmt.Sprintf("namespace %s: store unavailable: %v", s.names[i], err)
			}
			return fmt.Sprintf("store unavailable: %v", err)
		}
	}
	return ""
}

func plain(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, body)
}

// TraceLogHandler wraps h so that records logged with a context carrying
// a span get its trace_id and span_id (observe.TraceLogHandler).
func TraceLogHandler(h slog.Handler) slog.Handler { return observe.TraceLogHandler(h) }
