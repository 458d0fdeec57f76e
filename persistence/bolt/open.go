package bolt

import (
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/wfd-dev/wfd/persistence"
)

// openBolt opens the bbolt file at path with opts, waiting up to wait
// (negative: forever) while another process holds it, and so that a
// damaged file fails with a DamagedError: bbolt trusts the file as it maps
// it and reads its free list, so a file cut short or with a stray page
// number makes it panic or read outside its mapping. validate checks the
// file first, under a shared lock so that no process writes it meanwhile;
// what validate cannot see (a free list that names a page twice, say)
// still panics in bbolt, and guard turns that into a DamagedError too.
//
// It returns bbolt's *os.File too: closing it is the one way left to let go
// of the file's lock when bbolt is stuck (see Store.stuck).
func openBolt(path string, opts bolt.Options, wait time.Duration) (*bolt.DB, *os.File, *fileMeta, error) {
	lock, inUse, err := lockShared(path, wait)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: lock: %w", persistence.ErrUnavailable, err)
	}
	if inUse {
		return nil, nil, nil, inUseError(path)
	}
	fm, err := validate(path)
	if lock != nil {
		_ = lock.Close() // bbolt takes its own lock below
	}
	var damaged *DamagedError
	switch {
	case errors.As(err, &damaged):
		return nil, nil, fm, err
	case err != nil:
		return nil, nil, nil, fmt.Errorf("%w: read: %w", persistence.ErrUnavailable, err)
	}
	// lockShared has waited already: bbolt tries once (its wait ends when
	// less than one retry interval is left), unless asked to wait forever.
	opts.Timeout = time.Nanosecond
	if wait < 0 {
		opts.Timeout = 0
	}
	// bbolt gives its *DB back only when Open returns, so after a panic
	// only this copy of its file is left to close, which releases its lock.
	// (Its mapping of the file stays, once per failed open.)
	var file *os.File
	opts.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	var db *bolt.DB
	err = guard(path, func() error {
		var oerr error
		db, oerr = bolt.Open(path, 0o600, &opts)
		return oerr
	})
	switch {
	case err == nil:
		return db, file, fm, nil
	case errors.As(err, &damaged):
		if file != nil {
			_ = file.Close()
		}
		return nil, nil, fm, err
	case errors.Is(err, berrors.ErrTimeout):
		return nil, nil, fm, inUseError(path)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrVersionMismatch):
		return nil, nil, fm, &DamagedError{Path: path, Problem: err.Error()}
	default:
		return nil, nil, fm, fmt.Errorf("%w: %w", persistence.ErrUnavailable, err)
	}
}

// inUseError names the process that holds path, where it can be known.
func inUseError(path string) error {
	pid, cmd := lockHolder(path)
	return &InUseError{Path: path, PID: pid, Command: cmd}
}
