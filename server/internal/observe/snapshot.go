package observe

import (
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// Snapshot is what the server counts, read at one moment: GetStats and
// the Prometheus metrics answer from it.
type Snapshot struct {
	InMemory, IdleInMemory           int64
	Releases, Rehydrations, Reclaims int64
	DeletedRequest, DeletedRetention int64
	// SlotsQueued, SlotsAdmitted, SlotsRefused: Stats'.
	SlotsQueued, SlotsAdmitted, SlotsRefused int64
	// Queued counts the handlers waiting in concurrency keys' queues, by
	// workflow (read from the store with Counts).
	Queued                         map[string]int64
	Commits, CommitErrors, Changes int64
	Streams, Workers               int64
	Dispatches, Redispatches       int64
	// StreamBytes are the bytes StreamEvents streams are sending;
	// StreamsEnded counts the streams ended because they fell behind.
	StreamBytes, StreamsEnded int64
	// ScheduleOutcomes are the schedule outcomes this server recorded,
	// by kind.
	ScheduleOutcomes map[string]int64
	// StoreSize is the size of the store's file; -1 when it has none.
	StoreSize int64
	// The latest rehydrations' and dispatches' latencies.
	RehydrateP50, RehydrateP99 time.Duration
	DispatchP50, DispatchP99   time.Duration
	// Counts are the store's; zero when it could not be read.
	Counts       persistence.Counts
	TasksPending int64
}

// Add adds to s what o holds of one namespace (its handlers in memory,
// streams, workers, store size and counts), for a process serving
// several. The counters of the process (releases, commits, ...) and the
// latencies are s's: every namespace reads the same ones.
func (s *Snapshot) Add(o Snapshot) {
	s.InMemory += o.InMemory
	s.IdleInMemory += o.IdleInMemory
	s.Streams += o.Streams
	s.Workers += o.Workers
	s.Dispatches += o.Dispatches
	s.Redispatches += o.Redispatches
	if o.StoreSize > 0 {
		s.StoreSize = max(s.StoreSize, 0) + o.StoreSize
	}
	s.TasksPending += o.TasksPending
	s.Counts.Handlers += o.Counts.Handlers
	s.Counts.Idle += o.Counts.Idle
	s.Counts.Tasks += o.Counts.Tasks
	s.Counts.ByStatus = addCounts(s.Counts.ByStatus, o.Counts.ByStatus)
	s.Counts.ByResidency = addCounts(s.Counts.ByResidency, o.Counts.ByResidency)
	s.Counts.TasksByStatus = addCounts(s.Counts.TasksByStatus, o.Counts.TasksByStatus)
	s.Queued = addCounts(s.Queued, o.Queued)
}

func addCounts[K comparable](to, from map[K]int64) map[K]int64 {
	if len(from) == 0 {
		return to
	}
	if to == nil {
		to = make(map[K]int64, len(from))
	}
	for k, n := range from {
		to[k] += n
	}
	return to
}
