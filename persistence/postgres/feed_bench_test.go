package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/internal/pgtest"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/postgres"
)

// BenchmarkWriteFeed measures what the commit feed costs a Write: the
// same park-like Writes of 16 changes (as BenchmarkWrite's) by 1 or 3
// concurrent writers (the journals of 1 or 3 replicas), on a store that
// is not shared (no notification) and on a shared one (each Write
// notifies, and a follower listens). PostgreSQL serialises the commits of
// transactions that notify, so the concurrent case is the one to watch.
func BenchmarkWriteFeed(b *testing.B) {
	for _, shared := range []bool{false, true} {
		for _, writers := range []int{1, 3} {
			b.Run(fmt.Sprintf("shared=%v/writers=%d", shared, writers), func(b *testing.B) {
				s, err := postgres.Open(b.Context(), pgtest.NewDatabase(b), postgres.Options{Shared: shared})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = s.Close() })
				if shared {
					ctx, cancel := context.WithCancel(context.Background())
					listening := make(chan struct{}, 1)
					done := make(chan struct{})
					go func() {
						defer close(done)
						_ = s.FollowCommits(ctx, func(string, string, string) {}, func() {
							select {
							case listening <- struct{}{}:
							default:
							}
						})
					}()
					b.Cleanup(func() { cancel(); <-done })
					<-listening
				}
				const n = 16
				sets := make([][]persistence.Change, writers)
				for w := range sets {
					sets[w] = make([]persistence.Change, n)
					for i := range sets[w] {
						sets[w][i] = persistence.Change{Handler: testHandler(fmt.Sprintf("w%d-h%04d", w, i))}
					}
					if err := s.Write(b.Context(), sets[w]...); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				var (
					wg   sync.WaitGroup
					next = make(chan struct{})
				)
				for w := range writers {
					wg.Go(func() {
						changes := sets[w]
						seq := uint64(0)
						for range next {
							seq++
							for i := range changes {
								c := &changes[i]
								c.Handler.IdleSince = c.Handler.IdleSince.Add(time.Second)
								c.Snapshot = fmt.Appendf(c.Snapshot[:0], "snapshot %d of %s", seq, c.Handler.ID)
								c.Records = []persistence.Record{{Seq: seq, Data: []byte("record")}}
							}
							if err := s.Write(context.Background(), changes...); err != nil {
								b.Error(err)
							}
						}
					})
				}
				for b.Loop() {
					next <- struct{}{}
				}
				close(next)
				wg.Wait()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/write")
			})
		}
	}
}
