package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
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
