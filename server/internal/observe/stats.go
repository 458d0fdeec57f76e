package observe

import (
	"sync/atomic"
	"time"
)

// Stats are the server's counters since it started: GetStats and the
// Prometheus metrics (Metrics) both read them, through a Snapshot.
type Stats struct {
	Releases     atomic.Int64
	Rehydrations atomic.Int64
	Commits      atomic.Int64
	CommitErrors atomic.Int64
	Changes      atomic.Int64
	// Reclaims counts the times memory was given back after releases.
	Reclaims atomic.Int64
	// DeletedRequest and DeletedRetention count deleted handlers
	// (DeleteHandler, the retention sweep).
	DeletedRequest, DeletedRetention atomic.Int64
	// SlotsQueued, SlotsAdmitted and SlotsRefused count starts that waited
	// in a concurrency key's queue, queued handlers admitted, and starts
	// a concurrency limit refused.
	SlotsQueued, SlotsAdmitted, SlotsRefused atomic.Int64
	// Rehydrate holds the latest rehydrate latencies.
	Rehydrate LatencyRing
	// Hist are the latency and size distributions for /metrics.
	Hist Histograms
	// scheduleOutcomes counts the outcomes of schedule ticks this server
	// recorded, by kind (ScheduleOutcomeKinds).
	scheduleOutcomes [len(scheduleKinds)]atomic.Int64
}

// scheduleKinds are the kinds of schedule outcomes, the label of
// wfd_schedule_outcomes_total (schedule.OutcomeKind's values).
var scheduleKinds = [...]string{"started", "skipped", "missed", "failed", "buffered", "cancelled_previous"}

// ScheduleOutcome counts an outcome of kind a scheduler recorded.
func (s *Stats) ScheduleOutcome(kind string) {
	for i, k := range scheduleKinds {
		if k == kind {
			s.scheduleOutcomes[i].Add(1)
			return
		}
	}
}

// ScheduleOutcomes returns the outcomes counted, by kind.
func (s *Stats) ScheduleOutcomes() map[string]int64 {
	out := make(map[string]int64, len(scheduleKinds))
	for i, k := range scheduleKinds {
		out[k] = s.scheduleOutcomes[i].Load()
	}
	return out
}

func (s *Stats) Rehydrated(d time.Duration) {
	s.Rehydrations.Add(1)
	s.Rehydrate.Add(d)
	s.Hist.Rehydrate.Observe(d.Seconds())
}

// Reasons a handler is deleted, the label of wfd_handlers_deleted_total.
const (
	DeletedByRequest   = "request"
	DeletedByRetention = "retention"
)

// Deleted counts n handlers deleted for reason.
func (s *Stats) Deleted(reason string, n int) {
	if reason == DeletedByRetention {
		s.DeletedRetention.Add(int64(n))
	} else {
		s.DeletedRequest.Add(int64(n))
	}
}

// Committed counts one commit of n changes that took d.
func (s *Stats) Committed(n int, d time.Duration, err error) {
	s.Commits.Add(1)
	s.Changes.Add(int64(n))
	if err != nil {
		s.CommitErrors.Add(1)
	}
	s.Hist.Commit.Observe(d.Seconds())
	s.Hist.Changes.Observe(float64(n))
}
