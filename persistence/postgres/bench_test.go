package postgres_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// BenchmarkWrite measures a Write of n park-like changes (metadata with a
// waiter, a snapshot, a record, on handlers that exist), as the server's
// journal sends them: one commit each, fsync and synchronous_commit on.
// The cost of a Write grows far slower than n: one round trip locks the
// rows, one sends a multi-row statement per kind of row and COMMIT.
func BenchmarkWrite(b *testing.B) {
	for _, n := range []int{1, 16, 128} {
		b.Run(fmt.Sprint("changes=", n), func(b *testing.B) {
			s := open(b)
			b.Cleanup(func() { _ = s.Close() })
			changes := make([]persistence.Change, n)
			for i := range changes {
				changes[i] = persistence.Change{Handler: testHandler(fmt.Sprintf("h%04d", i))}
			}
			if err := s.Write(b.Context(), changes...); err != nil {
				b.Fatal(err)
			}
			seq := uint64(0)
			b.ResetTimer()
			for b.Loop() {
				seq++
				for i := range changes {
					c := &changes[i]
					c.Handler.IdleSince = c.Handler.IdleSince.Add(time.Second)
					c.Handler.Waiters[0].Deadline = c.Handler.Waiters[0].Deadline.Add(time.Second)
					c.Snapshot = fmt.Appendf(c.Snapshot[:0], "snapshot %d of %s", seq, c.Handler.ID)
					c.Records = []persistence.Record{{Seq: seq, Data: []byte("record")}}
				}
				if err := s.Write(b.Context(), changes...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/change")
		})
	}
}

// BenchmarkWritePerRow is the baseline BenchmarkWrite is measured
// against: the same rows written by one statement per row, each its own
// round trip, in one transaction (what a store without multi-row
// statements would do). It writes the schema's tables directly.
func BenchmarkWritePerRow(b *testing.B) {
	for _, n := range []int{1, 16, 128} {
		b.Run(fmt.Sprint("changes=", n), func(b *testing.B) {
			url := pgtest.NewDatabase(b)
			s, err := postgres.Open(b.Context(), url, postgres.Options{})
			if err != nil {
				b.Fatal(err)
			}
			_ = s.Close()
			conn, err := pgx.Connect(b.Context(), url)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = conn.Close(context.Background()) })
			now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			meta := make([]byte, 120)
			for i := range n {
				if _, err := conn.Exec(b.Context(), `INSERT INTO wfd_handlers VALUES ($1, 'wf', 1, 2, '', $2, 0, $2, 0, NULL, NULL, 0, $3)`,
					fmt.Sprintf("h%04d", i), now, meta); err != nil {
					b.Fatal(err)
				}
			}
			seq := int64(0)
			b.ResetTimer()
			for b.Loop() {
				seq++
				tx, err := conn.Begin(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					id := fmt.Sprintf("h%04d", i)
					at := now.Add(time.Duration(seq) * time.Second)
					for _, st := range []struct {
						sql  string
						args []any
					}{
						{`SELECT meta FROM wfd_handlers WHERE id = $1 FOR UPDATE`, []any{id}},
						{`UPDATE wfd_handlers SET idle_since = $2, last_seq = $3, meta = $4 WHERE id = $1`, []any{id, at, seq, meta}},
						{`INSERT INTO wfd_snapshots VALUES ($1, $2) ON CONFLICT (handler_id) DO UPDATE SET data = excluded.data`, []any{id, fmt.Appendf(nil, "snapshot %d of %s", seq, id)}},
						{`INSERT INTO wfd_records VALUES ($1, $2, 'record')`, []any{id, seq}},
						{`INSERT INTO wfd_timers VALUES ($1, 'w', $2, 0) ON CONFLICT (handler_id, waiter_id) DO UPDATE SET due_at = excluded.due_at`, []any{id, at.Add(time.Hour)}},
					} {
						if _, err := tx.Exec(b.Context(), st.sql, st.args...); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := tx.Commit(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/change")
		})
	}
}

// BenchmarkPublish measures Publish from 32 concurrent callers, as
// concurrent PublishEvent calls would make them.
func BenchmarkPublish(b *testing.B) {
	s := open(b)
	b.Cleanup(func() { _ = s.Close() })
	var next atomic.Int64
	b.SetParallelism(16) // 16 × GOMAXPROCS callers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p := persistence.Published{ID: fmt.Sprint("p", next.Add(1)), Key: "k", At: time.Now(), Data: []byte("data")}
			if _, err := s.Publish(b.Context(), p); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
