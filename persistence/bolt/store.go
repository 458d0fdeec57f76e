package bolt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/wfd-dev/wfd/persistence"
)

// DefaultPath is where wfd keeps its store unless configured otherwise.
const DefaultPath = "./data/wfd.db"

// Defaults for Options.
const (
	DefaultMaxBatchDelay = time.Millisecond
	DefaultMaxBatchSize  = 1000
)

// Options configure Open. The zero value is the production setting.
type Options struct {
	// NoSync skips fsync on commit. Only for tests and benchmarks: a crash
	// can lose acknowledged writes or corrupt the file.
	NoSync bool
	// Timeout is how long Open waits while another process holds the
	// file; 0 fails at once, negative waits forever. Either way the
	// error, an InUseError, names that process where it can be known.
	Timeout time.Duration
	// BoltBatch commits concurrent writes through bbolt's DB.Batch, which
	// waits up to MaxBatchDelay for writers to join a commit, instead of
	// the default group commit, which starts the next commit as soon as the
	// previous one ends. The group commit is faster at every concurrency
	// measured (BenchmarkWrite); this switch is kept for comparison.
	BoltBatch bool
	// MaxBatchDelay is how long DB.Batch waits for more writers to join a
	// commit (bbolt's DB.MaxBatchDelay); 0 means DefaultMaxBatchDelay.
	// Only used with BoltBatch.
	MaxBatchDelay time.Duration
	// MaxBatchSize is the most Writes one commit takes (bbolt's
	// DB.MaxBatchSize); 0 means DefaultMaxBatchSize.
	MaxBatchSize int
}

// Store is a persistence.Store on one bbolt file.
type Store struct {
	// mu is held shared by every transaction and exclusively by Reopen,
	// which replaces db.
	mu sync.RWMutex
	db *bolt.DB
	// file is db's file (see openBolt), closed directly when db is stuck.
	file *os.File
	// stuck is set when a damaged page left bbolt with a write
	// transaction it could not roll back, holding its writer lock: every
	// later write, and Close, would wait forever for it. The store then
	// fails every call with this error and never touches db again.
	stuck atomic.Pointer[DamagedError]
	path  string
	// bopts, wait, batchSize and batchDelay open db (again, in Reopen).
	bopts      bolt.Options
	wait       time.Duration
	batchSize  int
	batchDelay time.Duration
	closed     atomic.Bool
	// reopenErr is why the last Reopen left the store closed.
	reopenErr error
	// group is the group commit; nil with Options.BoltBatch.
	group *committer
	// writers counts Writes in flight with Options.BoltBatch, to let a
	// lone writer skip the batch delay (see Write).
	writers atomic.Int64
	// onSync, if set, is told how long each write transaction spent
	// writing and fsyncing its pages (ObserveSync).
	onSync atomic.Pointer[func(time.Duration)]
}

var _ persistence.Store = (*Store)(nil)

// Open opens (creating it and its directory if needed) the store at path.
// A damaged file fails with a DamagedError and a file with a layout this
// version does not know with ErrCorrupt; a file another process holds
// fails with an InUseError (ErrUnavailable) once opts.Timeout has passed.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: bolt: empty path", persistence.ErrInvalid)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("%w: bolt: create directory: %w", persistence.ErrUnavailable, err)
	}
	s := &Store{
		path: path,
		wait: opts.Timeout,
		bopts: bolt.Options{
			NoSync: opts.NoSync,
			// Nothing reads bbolt's counters, and keeping them costs a
			// lock and atomics per transaction.
			NoStatistics: true,
		},
		batchSize:  cmp.Or(opts.MaxBatchSize, DefaultMaxBatchSize),
		batchDelay: cmp.Or(opts.MaxBatchDelay, DefaultMaxBatchDelay),
	}
	if err := s.openDB(); err != nil {
		return nil, err
	}
	if err := s.updateDB(initSchema); err != nil {
		_ = s.Close()
		var foreign *ForeignFileError
		if errors.As(err, &foreign) {
			foreign.Path = path
			return nil, foreign
		}
		return nil, fmt.Errorf("bolt: open %s: %w", path, storageError(err))
	}
	if !opts.BoltBatch {
		s.group = newCommitter(s.updateDB, s.batchSize, path)
	}
	return s, nil
}

// openDB opens the bbolt file with the store's options as s.db.
func (s *Store) openDB() error {
	db, file, _, err := openBolt(s.path, s.bopts, s.wait)
	if err != nil {
		return fmt.Errorf("bolt: open %s: %w", s.path, err)
	}
	db.MaxBatchDelay = s.batchDelay
	db.MaxBatchSize = s.batchSize
	s.db, s.file = db, file
	return nil
}

// closeDB closes s.db, or only its file if it is stuck.
func (s *Store) closeDB() error {
	if s.stuck.Load() != nil {
		return s.file.Close()
	}
	return s.db.Close()
}

// Reopen closes the file and opens it again, which lets go of what bbolt
// keeps in memory for the life of an open file: its free-page bookkeeping
// has an entry for every page allocated since the open and never shrinks
// (about 12 bytes per handler once a mass release has rewritten the whole
// file), and its mapping of the file is dropped with it. Operations wait
// for the transactions in progress to end and then while it runs (about
// 30 µs on a 20,000-handler file, BenchmarkReopen: the file's pages are
// not read, only its meta and free-list pages). If
// the file cannot be opened again, the store stays closed and every later
// call fails with ErrUnavailable and the reason.
func (s *Store) Reopen(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return s.closedError()
	}
	if d := s.stuck.Load(); d != nil {
		return d
	}
	if err := s.db.Close(); err != nil {
		s.reopenErr = fmt.Errorf("bolt: reopen: close: %w", err)
		s.closed.Store(true)
		return s.closedError()
	}
	if err := s.openDB(); err != nil {
		s.reopenErr = fmt.Errorf("bolt: reopen: %w", err)
		s.closed.Store(true)
		return s.closedError()
	}
	return nil
}

// Path returns the file the store was opened on.
func (s *Store) Path() string { return s.path }

// Close closes the file. It waits for transactions in progress; later calls
// fail with ErrUnavailable. Closing twice is a no-op.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.closeDB(); err != nil {
		return fmt.Errorf("%w: bolt: close: %w", persistence.ErrUnavailable, err)
	}
	return nil
}

// begin is called at the start of every operation.
func (s *Store) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return s.closedError()
	}
	return nil
}

// closedError is the error of a call to a closed store. Call it with mu
// held (either way) or after closed was seen set.
func (s *Store) closedError() error {
	if s.reopenErr != nil {
		return fmt.Errorf("%w: bolt: store is closed: %w", persistence.ErrUnavailable, s.reopenErr)
	}
	return fmt.Errorf("%w: bolt: store is closed", persistence.ErrUnavailable)
}

// view runs fn in a read transaction and maps bbolt's errors.
func (s *Store) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	return storageError(s.withDB(func(db *bolt.DB) error { return db.View(fn) }))
}

// ObserveSync has f told, after every write transaction that commits, how
// long it spent writing its pages and fsyncing the file (bbolt's write
// time: the disk part of a commit, without the tree's rebalance and
// spill). f runs on the committing goroutine, so it must be quick.
func (s *Store) ObserveSync(f func(time.Duration)) { s.onSync.Store(&f) }

// updateDB runs fn in a write transaction of its own.
func (s *Store) updateDB(fn func(*bolt.Tx) error) error {
	var tx *bolt.Tx
	err := s.withDB(func(db *bolt.DB) error {
		return db.Update(func(t *bolt.Tx) error {
			tx = t
			// A fault in fn returns an error, after which bbolt rolls
			// back in memory; after a panic it would reread the free list.
			return guard(s.path, func() error { return fn(t) })
		})
	})
	if f := s.onSync.Load(); f != nil && err == nil && tx != nil {
		st := tx.Stats()
		(*f)(st.GetWriteTime())
	}
	// A panic in the commit itself (bbolt reads sibling pages to
	// rebalance) still makes bbolt reread the free list to roll back; if
	// that faults too, the transaction stays open (a closed one has no DB).
	var damaged *DamagedError
	if tx != nil && tx.DB() != nil && errors.As(err, &damaged) {
		s.stuck.CompareAndSwap(nil, &DamagedError{Path: s.path,
			Problem: "a damaged page left a write transaction that could not be rolled back; the store stopped (" + damaged.Problem + ")"})
	}
	return err
}

// withDB calls fn with the open bbolt file, which Reopen cannot replace
// until fn returns. A damaged page fails the call with a DamagedError
// (see guard), not the process.
func (s *Store) withDB(fn func(*bolt.DB) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed.Load() {
		return s.closedError()
	}
	if d := s.stuck.Load(); d != nil {
		return d
	}
	return guard(s.path, func() error { return fn(s.db) })
}

// storageError passes through errors that are already classified (ours,
// context) and marks every other error (bbolt's, I/O) as ErrUnavailable.
func storageError(err error) error {
	switch {
	case err == nil:
		return nil
	case isClassified(err):
		return err
	case errors.Is(err, berrors.ErrKeyTooLarge), errors.Is(err, berrors.ErrValueTooLarge):
		return fmt.Errorf("%w: %w", persistence.ErrInvalid, err)
	default:
		return fmt.Errorf("%w: bolt: %w", persistence.ErrUnavailable, err)
	}
}

func isClassified(err error) bool {
	for _, target := range []error{
		persistence.ErrNotFound, persistence.ErrExists, persistence.ErrConflict,
		persistence.ErrInvalid, persistence.ErrUnavailable, persistence.ErrCorrupt,
		context.Canceled, context.DeadlineExceeded,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
