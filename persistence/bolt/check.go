package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
)

// maxProblems is how many of bbolt's findings a CheckReport keeps; a badly
// damaged file can have one per page.
const maxProblems = 100

// CheckReport is what Check found in a store file.
type CheckReport struct {
	Path     string
	Size     int64  // bytes
	PageSize int64  // bytes per page
	Pages    uint64 // pages in use or free
	Free     int    // pages on the free list
	Txid     uint64 // the last committed transaction
	Buckets  int    // buckets read
	Keys     int    // keys read (values included)
	// Notes are oddities bbolt copes with by design, such as a meta page
	// left invalid by an interrupted commit.
	Notes []string
	// Problems is the damage found; empty if the file is sound.
	Problems []string
	// More counts the problems left out of Problems.
	More int
	// digest folds every byte read, so that the reads cannot be
	// optimized away.
	digest byte
}

// OK reports whether no problem was found.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 }

func (r *CheckReport) problem(format string, args ...any) {
	if len(r.Problems) >= maxProblems {
		r.More++
		return
	}
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// Check checks the store file at path for damage, offline: it opens the
// file read-only, and fails with an InUseError at once if a process has it
// open to write (wfd serve). It validates the meta pages, the free list
// and the file's size as Open does, reads every key and value of every
// bucket, and then runs bbolt's consistency check (Tx.Check: every page
// reachable once or free, keys in order). Damage is reported in the
// CheckReport; the error is for what kept Check from looking (the file
// missing, in use, unreadable). It reads the whole file.
func Check(ctx context.Context, path string) (*CheckReport, error) {
	r := &CheckReport{Path: path}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%w: bolt: no store file at %s", persistence.ErrNotFound, path)
	case err != nil:
		return nil, fmt.Errorf("%w: bolt: %w", persistence.ErrUnavailable, err)
	case st.Size() == 0:
		r.Notes = append(r.Notes, "the file is empty: wfd serve starts a new store in it")
		return r, nil
	}
	// PreLoadFreelist reads the free list in Open, under its guard; Tx.Check
	// would read it on a goroutine of its own.
	db, _, fm, err := openBolt(path, bolt.Options{ReadOnly: true, PreLoadFreelist: true}, 0)
	if fm != nil {
		r.Size, r.PageSize, r.Pages, r.Free, r.Txid = fm.size, fm.pageSize, fm.pages, fm.free, fm.txid
		if fm.invalidMeta != "" {
			r.problem("%s", fm.invalidMeta)
		}
	}
	var damaged *DamagedError
	if errors.As(err, &damaged) {
		r.problem("%s", damaged.Problem)
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bolt: check %s: %w", path, err)
	}
	defer func() { _ = db.Close() }()
	// Counted as loaded, also when the file has no free list of its own
	// and bbolt rebuilt it (after 'bbolt surgery freelist abandon').
	r.Free = db.Stats().FreePageN

	if err := r.readAll(ctx, db); err != nil {
		return nil, err
	}
	if !r.OK() {
		// Tx.Check reads pages on a goroutine of its own, where a fault
		// would end the process.
		r.Notes = append(r.Notes, "bbolt's consistency check was skipped: it would read the damaged pages unguarded")
		return r, nil
	}
	err = guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				r.problem("%v", err)
			}
			return nil
		})
	})
	if errors.As(err, &damaged) {
		r.problem("%s", damaged.Problem)
	}
	return r, nil
}

// readAll reads every key and value of every bucket, one top-level bucket
// per guarded transaction, so that damage in one does not hide the others.
// wfd's buckets missing from the file are problems too, except those a
// file of its schema version did not have yet.
func (r *CheckReport) readAll(ctx context.Context, db *bolt.DB) error {
	var (
		names   []string
		version uint32 // the file's schema; 0 if unreadable
	)
	err := guard(r.Path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			if meta := tx.Bucket([]byte(bucketMeta)); meta != nil {
				if v := meta.Get([]byte(keySchema)); len(v) == 4 {
					version = binary.BigEndian.Uint32(v)
				}
			}
			return tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
				names = append(names, string(name))
				return nil
			})
		})
	})
	var damaged *DamagedError
	if errors.As(err, &damaged) {
		r.problem("the list of buckets: %s", damaged.Problem)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: bolt: check %s: %w", persistence.ErrUnavailable, r.Path, err)
	}
	for _, name := range allBuckets() {
		// A file of schema 4, not yet opened by this wfd, has no
		// workflows bucket, and is sound: Open creates it.
		if name == bucketWorkflows && version < 5 && version > 0 {
			continue
		}
		// Nor has a file of schema 6 or older idx_workflow_version.
		if name == bucketVersion && version < 7 && version > 0 {
			continue
		}
		// Nor has a file an older wfd wrote the buckets Open creates
		// whatever the version.
		if createdOnOpen(name) {
			continue
		}
		if !slices.Contains(names, name) {
			r.problem("bucket %s is missing", name)
		}
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		var last []byte
		err := guard(r.Path, func() error {
			return db.View(func(tx *bolt.Tx) error {
				return r.readBucket(tx.Bucket([]byte(name)), &last)
			})
		})
		switch {
		case errors.As(err, &damaged) && last == nil:
			r.problem("bucket %s: %s", name, damaged.Problem)
		case errors.As(err, &damaged):
			r.problem("bucket %s, after key %q: %s", name, last, damaged.Problem)
		case err != nil:
			return fmt.Errorf("%w: bolt: check %s: %w", persistence.ErrUnavailable, r.Path, err)
		}
	}
	return nil
}

// readBucket reads b's keys and values (and nested buckets'), touching
// every byte so that every page is read; last is the last key read.
func (r *CheckReport) readBucket(b *bolt.Bucket, last *[]byte) error {
	r.Buckets++
	var sum byte
	err := b.ForEach(func(k, v []byte) error {
		r.Keys++
		for _, c := range k {
			sum ^= c
		}
		*last = append((*last)[:0], k...)
		if v == nil {
			if nested := b.Bucket(k); nested != nil {
				return r.readBucket(nested, last)
			}
			return nil
		}
		for _, c := range v {
			sum ^= c
		}
		return nil
	})
	r.digest ^= sum
	return err
}
