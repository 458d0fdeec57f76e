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
