package server

import (
	"context"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/persistence"
)

// stats are the server's counters since it started.
type stats struct {
	releases     atomic.Int64
	rehydrations atomic.Int64
	commits      atomic.Int64
	changes      atomic.Int64
	// reclaims counts the times memory was given back after releases.
	reclaims atomic.Int64
	// rehydrate holds the latest rehydrate latencies.
	rehydrate latencyRing
}

func (s *stats) rehydrated(d time.Duration) {
	s.rehydrations.Add(1)
	s.rehydrate.add(d)
}

func (v *service) GetStats(ctx context.Context, _ *wfdv1.GetStatsRequest) (*wfdv1.GetStatsResponse, error) {
	s := v.s
	counts, err := s.store.Count(ctx)
	if err != nil {
		return nil, toConnect(err)
	}
	p50, p99 := s.stats.rehydrate.quantiles()
	d50, d99 := s.workers.stats.latency.quantiles()
	out := &wfdv1.GetStatsResponse{
		HandlersActive:       int64(s.engine.Live()),
		HandlersIdleInMemory: int64(s.idle.len()),
		HandlersReleased:     counts.ByResidency[persistence.ResidencyReleased],
		HandlersByStatus:     map[string]int64{},
		ReleasesTotal:        s.stats.releases.Load(),
		RehydrationsTotal:    s.stats.rehydrations.Load(),
		RehydrateLatencyP50:  durationpb.New(p50),
		RehydrateLatencyP99:  durationpb.New(p99),
		Streams:              int64(s.hub.count()),
		CommitsTotal:         s.stats.commits.Load(),
		ChangesTotal:         s.stats.changes.Load(),
		WorkersConnected:     int64(s.workers.connected()),
		DispatchesTotal:      s.workers.stats.dispatches.Load(),
		RedispatchesTotal:    s.workers.stats.redispatches.Load(),
		DispatchLatencyP50:   durationpb.New(d50),
		DispatchLatencyP99:   durationpb.New(d99),
	}
	for st, n := range counts.ByStatus {
		out.HandlersByStatus[st.String()] = n
	}
	return out, nil
}
