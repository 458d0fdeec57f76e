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
	DefaultLockTimeout   = time.Second
	DefaultMaxBatchDelay = time.Millisecond
	DefaultMaxBatchSize  = 1000
)

// Options configure Open. The zero value is the production setting.
type Options struct {
	// NoSync skips fsync on commit. Only for tests and benchmarks: a crash
	// can lose acknowledged writes or corrupt the file.
	NoSync bool
	// Timeout is how long Open waits for the file lock held by another
	// process; 0 means DefaultLockTimeout, negative waits forever.
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
	mu   sync.RWMutex
	db   *bolt.DB
	path string
	// bopts, batchSize and batchDelay open db (again, in Reopen).
	bopts      bolt.Options
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
}

var _ persistence.Store = (*Store)(nil)

// Open opens (creating it and its directory if needed) the store at path.
// A file with a layout this version does not know fails with ErrCorrupt; a
// file locked by another process fails with ErrUnavailable after
// opts.Timeout.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: bolt: empty path", persistence.ErrInvalid)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("%w: bolt: create directory: %w", persistence.ErrUnavailable, err)
	}
	timeout := opts.Timeout
	switch {
	case timeout == 0:
		timeout = DefaultLockTimeout
	case timeout < 0:
		timeout = 0 // bbolt: wait forever
	}
	s := &Store{
		path: path,
		bopts: bolt.Options{
			Timeout: timeout, NoSync: opts.NoSync,
			// Nothing reads bbolt's counters, and keeping them costs a
			// lock and atomics per transaction.
			NoStatistics: true,
		},
		batchSize:  cmp.Or(opts.MaxBatchSize, DefaultMaxBatchSize),
		batchDelay: cmp.Or(opts.MaxBatchDelay, DefaultMaxBatchDelay),
	}
	db, err := s.openDB()
	if err != nil {
		return nil, err
	}
	if err := db.Update(initSchema); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("bolt: open %s: %w", path, storageError(err))
	}
	s.db = db
	if !opts.BoltBatch {
		s.group = newCommitter(s.updateDB, s.batchSize)
	}
	return s, nil
}

// openDB opens the bbolt file with the store's options.
func (s *Store) openDB() (*bolt.DB, error) {
	opts := s.bopts
	db, err := bolt.Open(s.path, 0o600, &opts)
	if err != nil {
		return nil, fmt.Errorf("bolt: open %s: %w", s.path, openError(err))
	}
	db.MaxBatchDelay = s.batchDelay
	db.MaxBatchSize = s.batchSize
	return db, nil
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
	if err := s.db.Close(); err != nil {
		s.reopenErr = fmt.Errorf("bolt: reopen: close: %w", err)
		s.closed.Store(true)
		return s.closedError()
	}
	db, err := s.openDB()
	if err != nil {
		s.reopenErr = fmt.Errorf("bolt: reopen: %w", err)
		s.closed.Store(true)
		return s.closedError()
	}
	s.db = db
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
	if err := s.db.Close(); err != nil {
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

// updateDB runs fn in a write transaction of its own.
func (s *Store) updateDB(fn func(*bolt.Tx) error) error {
	return s.withDB(func(db *bolt.DB) error { return db.Update(fn) })
}

// withDB calls fn with the open bbolt file, which Reopen cannot replace
// until fn returns.
func (s *Store) withDB(fn func(*bolt.DB) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed.Load() {
		return s.closedError()
	}
	return fn(s.db)
}

// openError classifies an error of bolt.Open.
func openError(err error) error {
	switch {
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrVersionMismatch):
		return fmt.Errorf("%w: %w", persistence.ErrCorrupt, err)
	default:
		return fmt.Errorf("%w: %w", persistence.ErrUnavailable, err)
	}
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
