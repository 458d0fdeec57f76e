package server

import (
	"context"
	"errors"
	"os"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/observe"
)

// snapshot is observe.Snapshot.
type snapshot = observe.Snapshot

// snapshotAll adds up the namespaces' snapshots, for /metrics: the
// counters are the process's, the gauges and counts the sum of every
// namespace's.
func (s *Server) snapshotAll(ctx context.Context) (observe.Snapshot, error) {
	var all observe.Snapshot
	var errs []error
	for i, name := range s.order {
		snap, err := s.snapshot(ctx, s.spaces[name])
		errs = append(errs, err)
		if i == 0 {
			all = snap
			continue
		}
		all.Add(snap)
	}
	return all, errors.Join(errs...)
}

// snapshot reads the counters, then sp's store's counts; an error means
// the counts could not be read (the rest is filled in). The counters
// (releases, commits, ...) are the process's, the rest sp's.
func (s *Server) snapshot(ctx context.Context, sp *space) (observe.Snapshot, error) {
	hub := sp.rt.Hub()
	snap := observe.Snapshot{
		InMemory:     int64(sp.rt.Engine().Live()),
		IdleInMemory: int64(sp.rt.IdleInMemory()),
		Releases:     s.stats.Releases.Load(),
		Rehydrations: s.stats.Rehydrations.Load(),
		Reclaims:     s.stats.Reclaims.Load(),
		Commits:      s.stats.Commits.Load(),
		CommitErrors: s.stats.CommitErrors.Load(),
		Changes:      s.stats.Changes.Load(),
		Streams:      int64(hub.Count()),
		Workers:      int64(sp.workers.Connected()),
		Dispatches:   sp.workers.Dispatches(),
		Redispatches: sp.workers.Redispatches(),
		// Read before the store's counts: a scrape that cannot read the
		// store still reports them.
		DeletedRequest:   s.stats.DeletedRequest.Load(),
		DeletedRetention: s.stats.DeletedRetention.Load(),
		StreamBytes:      s.streams.Sending(),
		StreamsEnded:     s.streams.Behind(),
		StoreSize:        storeSize(sp.store),
		ScheduleOutcomes: s.stats.ScheduleOutcomes(),
		SlotsQueued:      s.stats.SlotsQueued.Load(),
		SlotsAdmitted:    s.stats.SlotsAdmitted.Load(),
		SlotsRefused:     s.stats.SlotsRefused.Load(),
	}
	snap.RehydrateP50, snap.RehydrateP99 = s.stats.Rehydrate.Quantiles()
	snap.DispatchP50, snap.DispatchP99 = sp.workers.DispatchLatency()
	counts, err := sp.store.Count(ctx)
	if err != nil {
		return snap, err
	}
	snap.Counts = counts
	snap.TasksPending = counts.TasksByStatus[persistence.TaskPending]
	snap.Queued, err = queuedByWorkflow(ctx, sp.store)
	return snap, err
}

// queuedByWorkflow counts the handlers in concurrency keys' queues, by
// workflow (at most maxScannedKeys keys: a scrape stays bounded).
func queuedByWorkflow(ctx context.Context, store persistence.Slots) (map[string]int64, error) {
	const maxScannedKeys = 100000
	out := map[string]int64{}
	var after persistence.SlotKey
	for n := 0; n < maxScannedKeys; {
		keys, err := store.SlotKeys(ctx, after, persistence.MaxPageSize)
		if err != nil {
			return out, err
		}
		for _, k := range keys {
			out[k.Workflow] += int64(k.Queued)
		}
		if len(keys) < persistence.MaxPageSize {
			break
		}
		n += len(keys)
		after = keys[len(keys)-1].SlotKey
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
