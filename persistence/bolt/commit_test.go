package bolt

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/internal/testwait"
)

// TestCommitterGroups queues writes behind a running commit and checks that
// the next commit takes them together, that a failing and a panicking write
// are taken out and fail alone, and that the others commit in one
// transaction.
func TestCommitterGroups(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	c := newCommitter(db.Update, 100, db.Path())

	release := make(chan struct{})
	var (
		mu  sync.Mutex
		txs = map[string]int{} // call name → id of the last transaction it ran in
	)
	record := func(name string, tx *bolt.Tx) {
		mu.Lock()
		defer mu.Unlock()
		txs[name] = tx.ID()
	}
	fns := map[string]func(*bolt.Tx) error{
		"ok1":   func(tx *bolt.Tx) error { record("ok1", tx); return nil },
		"fail":  func(tx *bolt.Tx) error { record("fail", tx); return errors.New("precondition") },
		"panic": func(tx *bolt.Tx) error { panic("boom") },
		"ok2":   func(tx *bolt.Tx) error { record("ok2", tx); return nil },
	}

	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.do(func(*bolt.Tx) error { <-release; return nil }); err != nil {
			t.Errorf("blocking write: %v", err)
		}
	})
	waitQueue := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(testwait.Timeout); ; time.Sleep(time.Millisecond) {
			c.mu.Lock()
			busy, queued := c.busy, len(c.q)
			c.mu.Unlock()
			if busy && queued == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("queue has %d calls, want %d", queued, n)
			}
		}
	}
	waitQueue(0)
	errs := map[string]error{}
	var errsMu sync.Mutex
	for name, fn := range fns {
		wg.Go(func() {
			err := c.do(fn)
			errsMu.Lock()
			errs[name] = err
			errsMu.Unlock()
		})
	}
	waitQueue(len(fns))
	close(release)
	wg.Wait()

	if errs["ok1"] != nil || errs["ok2"] != nil {
		t.Fatalf("good writes failed: %v, %v", errs["ok1"], errs["ok2"])
	}
	if errs["fail"] == nil || errs["fail"].Error() != "precondition" {
		t.Fatalf("failing write: %v", errs["fail"])
	}
	if errs["panic"] == nil || !strings.Contains(errs["panic"].Error(), "boom") {
		t.Fatalf("panicking write: %v", errs["panic"])
	}
	if txs["ok1"] != txs["ok2"] {
		t.Fatalf("good writes committed in transactions %d and %d, want one", txs["ok1"], txs["ok2"])
	}
	if txs["fail"] <= txs["ok1"] {
		t.Fatalf("failing write last ran in transaction %d, not alone after the group's %d", txs["fail"], txs["ok1"])
	}
	if c.busy || len(c.q) != 0 {
		t.Fatalf("committer not idle: busy %v, %d queued", c.busy, len(c.q))
	}
}

// TestCommitterClosed checks that writes queued when the database closes
// fail instead of hanging.
func TestCommitterClosed(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c := newCommitter(db.Update, 100, db.Path())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := c.do(func(*bolt.Tx) error { return nil }); err == nil {
				t.Error("write on a closed database succeeded")
			}
		})
	}
	wg.Wait()
}
