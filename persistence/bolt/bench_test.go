package bolt_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// BenchmarkWrite measures checkpoints: one change of metadata, a 1 KiB
// snapshot and two stream records, with fsync on, from 1, 4 and 32
// goroutines (each checkpointing its own handler, as the engine's
// per-handler loops do). Compare changes/s across goroutine counts to see
// what shared commits buy, and across commit strategies: the default group
// commit, and bbolt's DB.Batch with this package's 1ms delay and with
// bbolt's own 10ms default. nosync shows the CPU cost without fsync.
func BenchmarkWrite(b *testing.B) {
	batch := bolt.Options{BoltBatch: true}
	variants := []struct {
		name       string
		goroutines int
		opts       bolt.Options
	}{
		{"group/goroutines=1", 1, bolt.Options{}},
		{"group/goroutines=4", 4, bolt.Options{}},
		{"group/goroutines=32", 32, bolt.Options{}},
		{"group/goroutines=1/nosync", 1, bolt.Options{NoSync: true}},
		{"boltbatch/goroutines=1", 1, batch},
		{"boltbatch/goroutines=4", 4, batch},
		{"boltbatch/goroutines=32", 32, batch},
		{"boltbatch/goroutines=32/delay=10ms", 32, bolt.Options{BoltBatch: true, MaxBatchDelay: 10 * time.Millisecond}},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			s, err := bolt.Open(filepath.Join(b.TempDir(), "wfd.db"), v.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			snapshot := make([]byte, 1024)
			record := make([]byte, 200)
			var writers atomic.Int64
			// checkpoint returns a function that writes the next
			// checkpoint of a new handler.
			checkpoint := func() func() {
				h := benchHandler(uuid.Must(uuid.NewV7()).String(), int(writers.Add(1)))
				var seq uint64
				return func() {
					seq += 2
					h.UpdatedAt = time.Now()
					err := s.Write(b.Context(), persistence.Change{
						Handler:  h,
						Snapshot: snapshot,
						Records:  []persistence.Record{{Seq: seq - 1, Data: record}, {Seq: seq, Data: record}},
					})
					if err != nil {
						b.Error(err)
					}
				}
			}
			if v.goroutines == 1 {
				next := checkpoint()
				for b.Loop() {
					next()
				}
			} else {
				procs := runtime.GOMAXPROCS(0)
				b.SetParallelism((v.goroutines + procs - 1) / procs)
				b.RunParallel(func(pb *testing.PB) {
					next := checkpoint()
					for pb.Next() {
						next()
					}
				})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
			b.ReportMetric(float64(writers.Load()), "goroutines")
		})
	}
}

func benchHandler(id string, i int) persistence.Handler {
	now := time.Now()
	return persistence.Handler{
		ID: id, Workflow: fmt.Sprint("wf-", i%3), Status: persistence.StatusRunning,
		Residency: persistence.ResidencyActive, Owner: "replica-a", CreatedAt: now, UpdatedAt: now,
	}
}

// BenchmarkListHandlers lists one page of 100 from 100k handlers, a third
// of them idle. Handlers created earlier have been idle longer (up to 100
// days), so "idle for at least 90 days" matches only the oldest 10% of the
// idle ones: the worst case for a newest-first listing, which must skip the
// recent idle handlers.
func BenchmarkListHandlers(b *testing.B) {
	const n = 100_000
	now := time.Now()
	s := fill(b, n, now)
	queries := []struct {
		name  string
		query persistence.Query
	}{
		{"idle", persistence.Query{IdleOnly: true}},
		{"idle-for-90d", persistence.Query{IdleFor: 90 * 24 * time.Hour, Now: now}},
		{"workflow+running+idle+released", persistence.Query{
			Workflow: "wf-0", Statuses: []persistence.Status{persistence.StatusRunning},
			IdleOnly: true, Residency: persistence.ResidencyReleased,
		}},
		{"no-filter", persistence.Query{}},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			q.query.PageSize = 100
			for b.Loop() {
				hs, _, err := s.ListHandlers(b.Context(), q.query)
				if err != nil || len(hs) != 100 {
					b.Fatalf("ListHandlers: %d handlers, %v", len(hs), err)
				}
			}
		})
	}
}

// fill creates n handlers: every third idle (idle since longer the older
// the handler, up to 100 days), half of those released, with a waiter.
func fill(b *testing.B, n int, now time.Time) *bolt.Store {
	b.Helper()
	s, err := bolt.Open(filepath.Join(b.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	const batch = 1000
	changes := make([]persistence.Change, 0, batch)
	for i := range n {
		h := benchHandler(uuid.Must(uuid.NewV7()).String(), i)
		switch i % 3 {
		case 0:
			h.IdleSince = now.Add(-time.Duration(float64(100*24*time.Hour) * float64(n-i) / float64(n)))
			h.Waiters = []persistence.Waiter{{ID: "w", Key: "answer/" + h.ID, Deadline: now.Add(time.Hour)}}
			if i%2 == 0 {
				h.Residency, h.Owner = persistence.ResidencyReleased, ""
			}
		case 1:
			h.Status = persistence.StatusCompleted
		}
		changes = append(changes, persistence.Change{Handler: h, Snapshot: make([]byte, 256)})
		if len(changes) == batch {
			if err := s.Write(b.Context(), changes...); err != nil {
				b.Fatal(err)
			}
			changes = changes[:0]
		}
	}
	if err := s.Write(b.Context(), changes...); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkReadRecords reads 100 records after a random position of a
// 10k-record stream, as a client resuming a stream does.
func BenchmarkReadRecords(b *testing.B) {
	const n = 10_000
	s, err := bolt.Open(filepath.Join(b.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7()).String()
	}
	// Interleave three handlers' streams so records share pages with
	// other handlers' records, as they do in a busy store.
	for seq := uint64(1); seq <= n; seq += 100 {
		var changes []persistence.Change
		for i, id := range ids {
			recs := make([]persistence.Record, 100)
			for j := range recs {
				recs[j] = persistence.Record{Seq: seq + uint64(j), Data: make([]byte, 200)}
			}
			changes = append(changes, persistence.Change{Handler: benchHandler(id, i), Records: recs})
		}
		if err := s.Write(b.Context(), changes...); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		recs, err := s.ReadRecords(b.Context(), ids[1], rng.Uint64N(n-100), 100)
		if err != nil || len(recs) != 100 {
			b.Fatalf("ReadRecords: %d records, %v", len(recs), err)
		}
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "records/s")
}
