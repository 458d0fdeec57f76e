package server

import (
	"context"
	"os"

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
		StreamBytes:      s.streams.Sending(),
		StreamsEnded:     s.streams.Behind(),
		StoreSize:        storeSize(s.store),
		ScheduleOutcomes: s.stats.ScheduleOutcomes(),
	}
	snap.RehydrateP50, snap.RehydrateP99 = s.stats.Rehydrate.Quantiles()
	snap.DispatchP50, snap.DispatchP99 = s.workers.DispatchLatency()
	counts, err := s.store.Count(ctx)
	if err != nil {
		return snap, err
	}
	snap.Counts = counts
	snap.TasksPending = counts.TasksByStatus[persistence.TaskPending]
	return snap, nil
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
