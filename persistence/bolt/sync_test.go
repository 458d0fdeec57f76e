package bolt_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// TestObserveSync: with fsync on, every Write that commits tells the
// observer how long writing and fsyncing took; a Write refused before it
// commits tells it nothing.
func TestObserveSync(t *testing.T) {
	s, err := bolt.Open(filepath.Join(t.TempDir(), "wfd.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	var (
		mu    sync.Mutex
		syncs []time.Duration
	)
	s.ObserveSync(func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		syncs = append(syncs, d)
	})
	for _, id := range []string{"a", "b"} {
		if err := s.Write(t.Context(), persistence.Change{Create: true, Handler: testHandler(id), Snapshot: []byte("s")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Write(t.Context(), persistence.Change{Create: true, Handler: testHandler("a"), Snapshot: []byte("s")}); err == nil {
		t.Fatal("creating handler a twice succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(syncs) != 2 {
		t.Fatalf("observed %d syncs for 2 commits: %v", len(syncs), syncs)
	}
	for _, d := range syncs {
		if d <= 0 {
			t.Errorf("a commit's write and fsync took %v", d)
		}
	}
}
