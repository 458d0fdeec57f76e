package bolt_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// TestReopenWhileBusy reopens the file again and again while writers add
// handlers and readers check them: no call fails, and everything written
// reads back, before and after a real close and open.
func TestReopenWhileBusy(t *testing.T) {
	for _, mode := range storeModes {
		t.Run(mode.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wfd.db")
			s, n := underLoad(t, path, mode.opts, func(s *bolt.Store) error { return s.Reopen(context.Background()) })
			for i := range n {
				checkSnapshot(t, s, i)
			}
			if c, err := s.Count(context.Background()); err != nil || c.Handlers != int64(n) {
				t.Fatalf("Count = %+v, %v; want %d handlers", c, err, n)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = open(t, path)
			defer func() { _ = s.Close() }()
			for i := range n {
				checkSnapshot(t, s, i)
			}
		})
	}
}

// TestReopenReleasesMemory checks what Reopen is for: the live heap that
// bbolt keeps for the pages allocated since the open (it only grows), and
// the file's mapped pages, both go.
func TestReopenReleasesMemory(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "wfd.db"))
	defer func() { _ = s.Close() }()
	const n = 5000 // about 8 MiB of file
	snap := make([]byte, 1000)
	for i := 0; i < n; i += 10 {
		var cs []persistence.Change
		for j := i; j < i+10; j++ {
			cs = append(cs, persistence.Change{Handler: testHandler(mappingID(j)), Snapshot: snap, Create: true})
		}
		if err := s.Write(context.Background(), cs...); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if _, err := s.LoadSnapshot(context.Background(), mappingID(i)); err != nil {
			t.Fatal(err)
		}
	}
	heapBefore, fileBefore := liveHeap(), int64(0)
	if runtime.GOOS == "linux" {
		fileBefore = rssFile(t)
	}
	if err := s.Reopen(context.Background()); err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	// bbolt maps each run of pages it allocated to the transaction that
	// did, 16 bytes and the map's overhead per entry, and a handler gets
	// about one run of its own (75 to 225 KB in all, measured).
	if freed := int64(heapBefore) - int64(liveHeap()); freed < n*8 {
		t.Errorf("live heap %d bytes before Reopen, %d freed; want at least %d", heapBefore, freed, n*8)
	}
	if runtime.GOOS == "linux" {
		if drop := fileBefore - rssFile(t); drop < 4<<20 {
			t.Errorf("RssFile dropped by %d bytes, want at least 4 MiB", drop)
		}
	}
	if c, err := s.Count(context.Background()); err != nil || c.Handlers != n {
		t.Fatalf("Count after Reopen = %+v, %v; want %d handlers", c, err, n)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestReopenFails damages the file under an open store: Reopen fails, the
// store stays closed, and every later call says why.
func TestReopenFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	defer func() { _ = s.Close() }()
	writeHandlers(t, s, 0, 10)

	// Overwrite both meta pages (bbolt's pages 0 and 1).
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 2*os.Getpagesize()), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	err = s.Reopen(context.Background())
	if !errors.Is(err, persistence.ErrUnavailable) || !errors.Is(err, persistence.ErrCorrupt) {
		t.Fatalf("Reopen of a damaged file: %v, want ErrUnavailable and ErrCorrupt", err)
	}
	_, err = s.LoadSnapshot(context.Background(), mappingID(0))
	if !errors.Is(err, persistence.ErrUnavailable) || !strings.Contains(err.Error(), "reopen") {
		t.Fatalf("LoadSnapshot after a failed Reopen: %v, want ErrUnavailable naming the reopen", err)
	}
	if err := s.Write(context.Background(), persistence.Change{Handler: testHandler(mappingID(99)), Create: true}); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("Write after a failed Reopen: %v, want ErrUnavailable", err)
	}
	if err := s.Reopen(context.Background()); !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("Reopen again: %v, want ErrUnavailable", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after a failed Reopen: %v", err)
	}
}

// BenchmarkReopen measures the pause Reopen imposes on a store of 20,000
// handlers (about 30 MiB): calls wait this long while it runs.
func BenchmarkReopen(b *testing.B) {
	s, err := bolt.Open(filepath.Join(b.TempDir(), "wfd.db"), bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	const n = 20000
	snap := make([]byte, 1000)
	for i := 0; i < n; i += 100 {
		var cs []persistence.Change
		for j := i; j < i+100; j++ {
			cs = append(cs, persistence.Change{Handler: testHandler(mappingID(j)), Snapshot: snap, Create: true})
		}
		if err := s.Write(context.Background(), cs...); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if err := s.Reopen(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
