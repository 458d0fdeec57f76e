package server

import (
	"context"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/persistence"
)

// stats are the server's counters since it started: GetStats and the
// Prometheus metrics (metrics.go) both read them, through snapshot.
type stats struct {
	releases     atomic.Int64
	rehydrations atomic.Int64
	commits      atomic.Int64
	commitErrors atomic.Int64
	changes      atomic.Int64
	// reclaims counts the times memory was given back after releases.
	reclaims atomic.Int64
	// deletedRequest and deletedRetention count deleted handlers
	// (DeleteHandler, the retention sweep).
	deletedRequest, deletedRetention atomic.Int64
	// rehydrate holds the latest rehydrate latencies.
	rehydrate latencyRing
	// hist are the latency and size distributions for /metrics.
	hist histograms
}

func (s *stats) rehydrated(d time.Duration) {
	s.rehydrations.Add(1)
	s.rehydrate.add(d)
	s.hist.rehydrate.Observe(d.Seconds())
}

// deleted counts n handlers deleted for reason.
func (s *stats) deleted(reason string, n int) {
	if reason == deletedByRetention {
		s.deletedRetention.Add(int64(n))
	} else {
		s.deletedRequest.Add(int64(n))
	}
}

// committed counts one commit of n changes that took d.
func (s *stats) committed(n int, d time.Duration, err error) {
	s.commits.Add(1)
	s.changes.Add(int64(n))
	if err != nil {
		s.commitErrors.Add(1)
	}
	s.hist.commit.Observe(d.Seconds())
	s.hist.changes.Observe(float64(n))
}

// statsSnapshot is what the server counts, read at one moment.
type statsSnapshot struct {
	inMemory, idleInMemory           int64
	releases, rehydrations, reclaims int64
	commits, commitErrors, changes   int64
	streams, workers                 int64
	dispatches, redispatches         int64
	counts                           persistence.Counts
	tasksPending                     int64
}

// snapshot reads the counters, then the store's counts; an error means
// the counts could not be read (the rest is filled in).
func (s *Server) snapshot(ctx context.Context) (statsSnapshot, error) {
	snap := statsSnapshot{
		inMemory:     int64(s.engine.Live()),
		idleInMemory: int64(s.idle.len()),
		releases:     s.stats.releases.Load(),
		rehydrations: s.stats.rehydrations.Load(),
		reclaims:     s.stats.reclaims.Load(),
		commits:      s.stats.commits.Load(),
		commitErrors: s.stats.commitErrors.Load(),
		changes:      s.stats.changes.Load(),
		streams:      int64(s.hub.count()),
		workers:      int64(s.workers.connected()),
		dispatches:   s.workers.stats.dispatches.Load(),
		redispatches: s.workers.stats.redispatches.Load(),
	}
	counts, err := s.store.Count(ctx)
	if err != nil {
		return snap, err
	}
	snap.counts = counts
	snap.tasksPending = counts.TasksByStatus[persistence.TaskPending]
	return snap, nil
}

func (v *service) GetStats(ctx context.Context, _ *wfdv1.GetStatsRequest) (*wfdv1.GetStatsResponse, error) {
	s := v.s
	snap, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	p50, p99 := s.stats.rehydrate.quantiles()
	d50, d99 := s.workers.stats.latency.quantiles()
	out := &wfdv1.GetStatsResponse{
		HandlersActive:       snap.inMemory,
		HandlersIdleInMemory: snap.idleInMemory,
		HandlersReleased:     snap.counts.ByResidency[persistence.ResidencyReleased],
		HandlersByStatus:     map[string]int64{},
		ReleasesTotal:        snap.releases,
		RehydrationsTotal:    snap.rehydrations,
		RehydrateLatencyP50:  durationpb.New(p50),
		RehydrateLatencyP99:  durationpb.New(p99),
		Streams:              snap.streams,
		CommitsTotal:         snap.commits,
		ChangesTotal:         snap.changes,
		WorkersConnected:     snap.workers,
		DispatchesTotal:      snap.dispatches,
		RedispatchesTotal:    snap.redispatches,
		DispatchLatencyP50:   durationpb.New(d50),
		DispatchLatencyP99:   durationpb.New(d99),
		TasksPending:         snap.tasksPending,
	}
	for st, n := range snap.counts.ByStatus {
		out.HandlersByStatus[st.String()] = n
	}
	return out, nil
}
