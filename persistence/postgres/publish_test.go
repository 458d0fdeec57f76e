package postgres_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/wfd-dev/wfd/persistence"
)

// TestPublishedAfterMissesNothing follows the log with PublishedAfter
// while many publishers append to it concurrently, as the server's event
// follower does, and checks that the follower sees every entry once, in
// order, with sequence numbers 1..n: an entry can never become visible
// behind the follower's position (with numbers taken from a SEQUENCE it
// could, when a publisher that took a smaller number commits after one
// that took a larger one).
func TestPublishedAfterMissesNothing(t *testing.T) {
	const (
		publishers = 16
		each       = 25
		n          = publishers * each
	)
	s := open(t)
	t.Cleanup(func() { _ = s.Close() })
	var (
		wg   sync.WaitGroup
		done atomic.Bool
	)
	for g := range publishers {
		wg.Go(func() {
			for i := range each {
				p := persistence.Published{ID: uuid.NewString(), Key: fmt.Sprint("k", g%3), At: time.Now(), Data: fmt.Appendf(nil, "%d/%d", g, i)}
				if _, err := s.Publish(t.Context(), p); err != nil {
					t.Errorf("Publish: %v", err)
					return
				}
			}
		})
	}
	go func() { wg.Wait(); done.Store(true) }()

	var seen []uint64
	deadline := time.Now().Add(time.Minute)
	for {
		finished := done.Load() // before the read: a read after the last commit sees everything
		after := uint64(0)
		if len(seen) > 0 {
			after = seen[len(seen)-1]
		}
		got, err := s.PublishedAfter(t.Context(), after, 7)
		if err != nil {
			t.Fatalf("PublishedAfter(%d): %v", after, err)
		}
		for _, p := range got {
			seen = append(seen, p.Seq)
		}
		if finished && len(got) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the publishers did not finish in a minute; %d entries seen", len(seen))
		}
	}
	if len(seen) != n {
		t.Fatalf("the follower saw %d entries, want %d", len(seen), n)
	}
	for i, seq := range seen {
		if seq != uint64(i+1) {
			t.Fatalf("entry %d has seq %d, want %d (the follower skipped or repeated one)", i, seq, i+1)
		}
	}
}

// TestPublishSameIDConcurrently publishes one id from many callers at
// once, so that some share a transaction and some do not: every caller
// gets the one stored entry, and the log holds it once.
func TestPublishSameIDConcurrently(t *testing.T) {
	s := open(t)
	t.Cleanup(func() { _ = s.Close() })
	const callers = 32
	got := make([]persistence.Published, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			p := persistence.Published{ID: "once", Key: "k", At: time.Now(), Data: fmt.Appendf(nil, "caller %d", i)}
			var err error
			if got[i], err = s.Publish(t.Context(), p); err != nil {
				t.Errorf("Publish %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	for i, p := range got {
		if p.Seq != 1 || string(p.Data) != string(got[0].Data) {
			t.Errorf("caller %d got seq %d, data %q; caller 0 got seq %d, data %q", i, p.Seq, p.Data, got[0].Seq, got[0].Data)
		}
	}
	log, err := s.PublishedAfter(t.Context(), 0, 0)
	if err != nil || len(log) != 1 {
		t.Fatalf("PublishedAfter: %d entries, %v; want 1", len(log), err)
	}
}
