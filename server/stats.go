package server

import (
	"context"
	"os"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/observe"
)

// snapshot reads the counters, then the store's counts; an error means
// the counts could not be read (the rest is filled in).
func (s *Server) snapshot(ctx context.Context) (observe.Snapshot, error) {
	snap := observe.Snapshot{
		InMemory:     int64(s.engine.Live()),
		IdleInMemory: int64(s.rt.IdleInMemory()),
		Releases:     s.stats.Releases.Load(),
		Rehydrations: s.stats.Rehydrations.Load(),
		Reclaims:     s.stats.Reclaims.Load(),
		Commits:      s.stats.Commits.Load(),
		CommitErrors: s.stats.CommitErrors.Load(),
		Changes:      s.stats.Changes.Load(),
		Streams:      int64(s.hub.Count()),
		Workers:      int64(s.workers.Connected()),
		Dispatches:   s.workers.Dispatches(),
		Redispatches: s.workers.Redispatches(),
		// Read before the store's counts: a scrape that cannot read the
		// store still reports them.
		DeletedRequest:   s.stats.DeletedRequest.Load(),
		DeletedRetention: s.stats.DeletedRetention.Load(),
		StreamBytes:      s.streams.sending.Load(),
		StreamsEnded:     s.streams.behind.Load(),
		StoreSize:        storeSize(s.store),
	}
	counts, err := s.store.Count(ctx)
	if err != nil {
		return snap, err
	}
	snap.Counts = counts
	snap.TasksPending = counts.TasksByStatus[persistence.TaskPending]
	return snap, nil
}

func (v *service) GetStats(ctx context.Context, _ *wfdv1.GetStatsRequest) (*wfdv1.GetStatsResponse, error) {
	s := v.s
	snap, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	p50, p99 := s.stats.Rehydrate.Quantiles()
	d50, d99 := s.workers.DispatchLatency()
	out := &wfdv1.GetStatsResponse{
		HandlersActive:       snap.InMemory,
		HandlersIdleInMemory: snap.IdleInMemory,
		HandlersReleased:     snap.Counts.ByResidency[persistence.ResidencyReleased],
		HandlersByStatus:     map[string]int64{},
		ReleasesTotal:        snap.Releases,
		RehydrationsTotal:    snap.Rehydrations,
		RehydrateLatencyP50:  durationpb.New(p50),
		RehydrateLatencyP99:  durationpb.New(p99),
		Streams:              snap.Streams,
		CommitsTotal:         snap.Commits,
		ChangesTotal:         snap.Changes,
		WorkersConnected:     snap.Workers,
		DispatchesTotal:      snap.Dispatches,
		RedispatchesTotal:    snap.Redispatches,
		DispatchLatencyP50:   durationpb.New(d50),
		DispatchLatencyP99:   durationpb.New(d99),
		TasksPending:         snap.TasksPending,
	}
	for st, n := range snap.Counts.ByStatus {
		out.HandlersByStatus[st.String()] = n
	}
	return out, nil
}

// storeSize is the size of the store's file, -1 if it has none.
func storeSize(store persistence.Store) int64 {
	if p, ok := store.(interface{ Path() string }); ok {
		if fi, err := os.Stat(p.Path()); err == nil {
			return fi.Size()
		}
	}
	return -1
}
