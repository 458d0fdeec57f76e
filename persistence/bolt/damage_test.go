package bolt_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/bolt"
)

// damagedStore writes n handlers (mappingID(0..n-1)) to a new store file,
// closes it and returns its path.
func damagedStore(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wfd.db")
	s := open(t, path)
	writeHandlers(t, s, 0, n)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// pageOf reads page id of the file at path.
func pageOf(t *testing.T, path string, id uint64, pageSize int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	page := make([]byte, pageSize)
	if _, err := f.ReadAt(page, int64(id)*int64(pageSize)); err != nil {
		t.Fatal(err)
	}
	return page
}

// overwrite writes b at off into the file at path.
func overwrite(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// layout returns the page size, the free list's page and the root page of
// bucket name in the (closed) store file at path.
func layout(t *testing.T, path, name string) (pageSize int, freelist, root uint64) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, PreLoadFreelist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	err = db.View(func(tx *bbolt.Tx) error {
		root = uint64(tx.Bucket([]byte(name)).Root())
		// The free list's page is the only page of its kind.
		for id := 2; ; id++ {
			info, err := tx.Page(id)
			if err != nil || info == nil {
				return err
			}
			if info.Type == "freelist" {
				freelist = uint64(id)
				return nil
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if freelist == 0 || root == 0 {
		t.Fatalf("no free-list page (%d) or no root page of %s (%d)", freelist, name, root)
	}
	return db.Info().PageSize, freelist, root
}

// rootPage returns the page of the top-level bucket list, from the meta
// page with the higher transaction id (meta: magic, version, page size,
// flags u32; root u64 at 16, txid u64 at 48; after the 16-byte header).
func rootPage(t *testing.T, path string, pageSize int) uint64 {
	t.Helper()
	ne := binary.NativeEndian
	m0, m1 := pageOf(t, path, 0, pageSize)[16:], pageOf(t, path, 1, pageSize)[16:]
	if ne.Uint64(m1[48:]) > ne.Uint64(m0[48:]) {
		m0 = m1
	}
	return ne.Uint64(m0[16:])
}

// breakChild points element i of the branch page at the root of bucket
// name far outside the file, as a bit flip in a page number does, and
// returns the range of keys [from, to) under that element.
func breakChild(t *testing.T, path, name string, i int) (from, to string) {
	t.Helper()
	pageSize, _, root := layout(t, path, name)
	page := pageOf(t, path, root, pageSize)
	ne := binary.NativeEndian
	flags, count := ne.Uint16(page[8:]), int(ne.Uint16(page[10:]))
	if flags != 0x01 || count < i+2 {
		t.Fatalf("bucket %s: root page %d has flags %#x and %d elements, want a branch page with more than %d", name, root, flags, count, i+1)
	}
	key := func(i int) string { // element: pos u32, ksize u32, pgid u64; pos from the element
		e := 16 + 16*i
		pos, ksize := int(ne.Uint32(page[e:])), int(ne.Uint32(page[e+4:]))
		return string(page[e+pos : e+pos+ksize])
	}
	// Far beyond any mapping, yet inside bbolt's bound on page offsets.
	wild := make([]byte, 8)
	ne.PutUint64(wild, 0xF000_0000_0000/uint64(pageSize))
	overwrite(t, path, int64(root)*int64(pageSize)+int64(16+16*i+8), wild)
	return key(i), key(i + 1)
}

// TestOpenDamaged: a damaged file fails Open with a DamagedError that says
// what is wrong, instead of a panic, and leaves nothing locked: once the
// file is restored, it opens in the same process.
func TestOpenDamaged(t *testing.T) {
	good := damagedStore(t, 100)
	pageSize, freelist, _ := layout(t, good, "handlers")
	st, err := os.Stat(good)
	if err != nil {
		t.Fatal(err)
	}
	junk := []byte(strings.Repeat("bit rot!", 2))
	tests := []struct {
		name    string
		damage  func(t *testing.T, path string)
		problem string
	}{
		{"cut short", func(t *testing.T, path string) {
			if err := os.Truncate(path, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, "cut short"},
		{"meta pages overwritten", func(t *testing.T, path string) {
			overwrite(t, path, 0, make([]byte, 2*pageSize))
		}, "neither meta page is valid"},
		{"free list page overwritten", func(t *testing.T, path string) {
			overwrite(t, path, int64(freelist)*int64(pageSize), junk)
		}, "is not a free-list page"},
		{"the root page's header overwritten", func(t *testing.T, path string) {
			overwrite(t, path, int64(rootPage(t, path, pageSize))*int64(pageSize), junk)
		}, "is not a tree page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wfd.db")
			copyFile(t, good, path)
			tt.damage(t, path)
			s, err := bolt.Open(path, bolt.Options{})
			if err == nil {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				t.Fatal("Open succeeded on a damaged file")
			}
			var d *bolt.DamagedError
			if !errors.As(err, &d) || !errors.Is(err, persistence.ErrCorrupt) {
				t.Fatalf("Open = %v, want a DamagedError (ErrCorrupt)", err)
			}
			if d.Path != path || !strings.Contains(d.Problem, tt.problem) {
				t.Errorf("DamagedError{Path: %q, Problem: %q}, want %q and a problem with %q", d.Path, d.Problem, path, tt.problem)
			}
			r, err := bolt.Check(t.Context(), path)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if r.OK() || !strings.Contains(strings.Join(r.Problems, "\n"), tt.problem) {
				t.Errorf("Check found %q, want a problem with %q", r.Problems, tt.problem)
			}
			copyFile(t, good, path)
			s = open(t, path)
			checkSnapshot(t, s, 7)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDamagedPage: a page number in the handlers bucket points far outside
// the file, so reading the handlers under it faults. Those reads fail with
// a DamagedError; the process goes on, and so do the reads and writes of
// the other handlers.
func TestDamagedPage(t *testing.T) {
	const n = 300
	path := damagedStore(t, n)
	from, to := breakChild(t, path, "handlers", 1)
	s := open(t, path)
	defer func() { _ = s.Close() }()
	ctx := t.Context()
	damaged := 0
	for i := range n {
		id := mappingID(i)
		_, err := s.GetHandler(ctx, id)
		if id < from || id >= to {
			if err != nil {
				t.Errorf("GetHandler %s (outside the damaged range %s..%s): %v", id, from, to, err)
			}
			continue
		}
		damaged++
		var d *bolt.DamagedError
		if !errors.As(err, &d) || !errors.Is(err, persistence.ErrCorrupt) {
			t.Fatalf("GetHandler %s = %v, want a DamagedError", id, err)
		}
		if runtime.GOARCH == "amd64" && !strings.Contains(d.Problem, "fault") {
			t.Errorf("GetHandler %s: %q, want a fault", id, d.Problem)
		}
	}
	if damaged == 0 {
		t.Fatalf("no handler in the damaged range %s..%s", from, to)
	}
	// Writes that do not touch the damaged page still commit.
	late := mappingID(n + 1)
	if err := s.Write(ctx, persistence.Change{Handler: testHandler(late), Create: true}); err != nil {
		t.Fatalf("Write after the damage: %v", err)
	}
	if _, err := s.GetHandler(ctx, late); err != nil {
		t.Fatalf("GetHandler %s: %v", late, err)
	}
	checkSnapshot(t, s, 0)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	r, err := bolt.Check(ctx, path)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if r.OK() || !strings.Contains(strings.Join(r.Problems, "\n"), "bucket handlers") {
		t.Errorf("Check found %q, want a problem in bucket handlers", r.Problems)
	}
}

// TestFileCutUnderneath cuts the file short while the store has it mapped:
// every read of a page past the new end raises SIGBUS. Reads and writes
// fail with a DamagedError, with both commit strategies, and the process
// goes on.
func TestFileCutUnderneath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("relies on Linux raising SIGBUS for pages of a mapping past the end of its file")
	}
	for _, mode := range storeModes {
		t.Run(mode.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wfd.db")
			s, err := bolt.Open(path, mode.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			writeHandlers(t, s, 0, 50)
			checkSnapshot(t, s, 3)
			// Keep the meta pages: bbolt reads them from its own copy.
			if err := os.Truncate(path, 2*int64(os.Getpagesize())); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for range 3 {
				if _, err := s.GetHandler(ctx, mappingID(3)); !isFault(err) {
					t.Fatalf("GetHandler on a cut file = %v, want a DamagedError for a fault", err)
				}
			}
			if _, err := s.LoadSnapshot(ctx, mappingID(4)); !isFault(err) {
				t.Fatalf("LoadSnapshot on a cut file = %v, want a DamagedError for a fault", err)
			}
			err = s.Write(ctx, persistence.Change{Handler: testHandler(mappingID(99)), Create: true})
			if !errors.Is(err, persistence.ErrCorrupt) {
				t.Fatalf("Write on a cut file = %v, want ErrCorrupt", err)
			}
			// The failed write left no transaction behind: the store
			// answers, and closes.
			if _, err := s.GetHandler(ctx, mappingID(3)); !isFault(err) {
				t.Fatalf("GetHandler after the failed write = %v, want a DamagedError for a fault", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		})
	}
}

func isFault(err error) bool {
	var d *bolt.DamagedError
	return errors.As(err, &d) && strings.Contains(d.Problem, "fault")
}

// TestCheck: Check reads a sound file without finding anything, refuses
// a file a store has open, and reports a missing file.
func TestCheck(t *testing.T) {
	path := damagedStore(t, 20)
	r, err := bolt.Check(t.Context(), path)
	if err != nil || !r.OK() {
		t.Fatalf("Check on a sound file = %+v, %v", r, err)
	}
	if r.Keys < 20 || r.Pages == 0 || r.PageSize == 0 {
		t.Errorf("Check read %d keys of %d pages of %d bytes, want at least 20 keys", r.Keys, r.Pages, r.PageSize)
	}
	s := open(t, path)
	defer func() { _ = s.Close() }()
	_, err = bolt.Check(t.Context(), path)
	var inUse *bolt.InUseError
	if !errors.As(err, &inUse) || !errors.Is(err, persistence.ErrUnavailable) {
		t.Fatalf("Check on an open store = %v, want an InUseError", err)
	}
	if _, err := bolt.Check(t.Context(), filepath.Join(t.TempDir(), "none.db")); !errors.Is(err, persistence.ErrNotFound) {
		t.Errorf("Check on no file = %v, want ErrNotFound", err)
	}
}

// TestOpenInUse: a second Open of a store in use fails at once with an
// InUseError that names the holder (this process, here), and one that
// waits gets the store once the first closes it.
func TestOpenInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wfd.db")
	first := open(t, path)
	_, err := bolt.Open(path, bolt.Options{})
	var inUse *bolt.InUseError
	if !errors.As(err, &inUse) || !errors.Is(err, persistence.ErrUnavailable) {
		if err := first.Close(); err != nil {
			t.Fatal(err)
		}
		t.Fatalf("second Open = %v, want an InUseError", err)
	}
	if runtime.GOOS == "linux" && (inUse.PID != os.Getpid() || inUse.Holder() != "this process") {
		t.Errorf("InUseError names pid %d (%q), want this process (%d)", inUse.PID, inUse.Holder(), os.Getpid())
	}
	opened := make(chan error, 1)
	go func() {
		s, err := bolt.Open(path, bolt.Options{Timeout: -1})
		if err == nil {
			err = s.Close()
		}
		opened <- err
	}()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open waiting for the lock: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
