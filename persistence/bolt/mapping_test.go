package bolt_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// snapshotOf is the snapshot mapping tests write for handler i: big enough
// that the file outgrows bbolt's first mappings and is remapped meanwhile.
func snapshotOf(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("snapshot %06d|", i)), 400)
}

func mappingID(i int) string { return fmt.Sprintf("019a0000-0000-7000-8000-%012d", i) }

// writeHandlers writes handlers [from, to) in changes of ten.
func writeHandlers(t *testing.T, s *bolt.Store, from, to int) {
	t.Helper()
	for i := from; i < to; i += 10 {
		var cs []persistence.Change
		for j := i; j < min(i+10, to); j++ {
			cs = append(cs, persistence.Change{Handler: testHandler(mappingID(j)), Snapshot: snapshotOf(j), Create: true})
		}
		if err := s.Write(context.Background(), cs...); err != nil {
			t.Errorf("Write: %v", err)
			return
		}
	}
}

// checkSnapshot reads handler i's snapshot back and compares it.
func checkSnapshot(t *testing.T, s *bolt.Store, i int) {
	t.Helper()
	got, err := s.LoadSnapshot(context.Background(), mappingID(i))
	if err != nil {
		t.Errorf("LoadSnapshot %d: %v", i, err)
		return
	}
	if !bytes.Equal(got, snapshotOf(i)) {
		t.Errorf("LoadSnapshot %d: %d bytes that differ from what was written", i, len(got))
	}
}

// storeModes are the store's two commit strategies.
var storeModes = []struct {
	name string
	opts bolt.Options
}{
	{"GroupCommit", bolt.Options{}},
	{"BoltBatch", bolt.Options{BoltBatch: true}},
}

// underLoad opens a store at path and calls op on it again and again while
// four writers grow the file and four readers check what they read. It
// fails the test if op fails or never ran, and returns the open store and
// how many handlers were written (0 to n-1).
func underLoad(t *testing.T, path string, opts bolt.Options, op func(*bolt.Store) error) (*bolt.Store, int) {
	t.Helper()
	const writers, per = 4, 200
	s, err := bolt.Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	writeHandlers(t, s, 0, 50)

	var written atomic.Int64
	written.Store(50)
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var wg, bg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := 50 + w*per; i < 50+(w+1)*per; i += 10 {
				writeHandlers(t, s, i, i+10)
			}
			written.Add(per)
		})
	}
	for r := range 4 {
		bg.Go(func() {
			for n := r; !stopped(); n++ {
				checkSnapshot(t, s, n%50)
			}
		})
	}
	ran := 0
	bg.Go(func() {
		for ; !stopped(); ran++ {
			if err := op(s); err != nil {
				t.Errorf("under load: %v", err)
				return
			}
		}
	})
	wg.Wait()
	close(stop)
	bg.Wait()
	if ran == 0 {
		t.Fatal("the operation never ran while the store was busy")
	}
	return s, int(written.Load())
}

// TestDropMappedPages drops the mapping again and again while writers grow
// the file and readers check what they read; then everything reads back.
func TestDropMappedPages(t *testing.T) {
	for _, mode := range storeModes {
		t.Run(mode.name, func(t *testing.T) {
			drop := func(s *bolt.Store) error { return s.DropMappedPages(context.Background()) }
			s, n := underLoad(t, filepath.Join(t.TempDir(), "wfd.db"), mode.opts, drop)
			if err := drop(s); err != nil {
				t.Fatalf("DropMappedPages: %v", err)
			}
			for i := range n {
				checkSnapshot(t, s, i)
			}
		})
	}
}

// TestDropMappedPagesRSS checks that dropping the mapping lowers the
// process's file-backed RSS by about the pages the reads touched.
func TestDropMappedPagesRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("DropMappedPages drops pages on Linux only")
	}
	s := open(t, filepath.Join(t.TempDir(), "wfd.db"))
	defer func() { _ = s.Close() }()
	const n = 1000 // about 6 MiB of snapshots
	writeHandlers(t, s, 0, n)
	for i := range n {
		checkSnapshot(t, s, i)
	}
	before := rssFile(t)
	if err := s.DropMappedPages(context.Background()); err != nil {
		t.Fatalf("DropMappedPages: %v", err)
	}
	after := rssFile(t)
	if drop := before - after; drop < 4<<20 {
		t.Errorf("RssFile %d -> %d bytes: dropped %d, want at least 4 MiB", before, after, drop)
	}
	// The data is still there.
	for i := range n {
		checkSnapshot(t, s, i)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.DropMappedPages(context.Background()); !errors.Is(err, persistence.ErrUnavailable) {
		t.Errorf("DropMappedPages after Close: %v, want ErrUnavailable", err)
	}
}

// rssFile returns the process's resident file-backed memory in bytes.
func rssFile(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
