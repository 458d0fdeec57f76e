package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// Write applies changes in one atomic, durable commit.
//
// Concurrent Writes share commits: one fsync then covers many writers,
// which is what makes checkpointing after every step affordable. By default
// they go through the store's group commit (see committer); with
// Options.BoltBatch, through bbolt's DB.Batch. Both may run the transaction
// function more than once (when a shared transaction is retried without a
// failing member), so the function below derives everything from the
// transaction and the immutable changes and keeps no state between runs.
// When a change fails (a precondition, a conflict), the shared transaction
// is rolled back, the other callers' changes commit without it, and the
// failing one runs again alone, where it fails again and rolls back: one
// caller's conflict never fails another caller's changes.
func (s *Store) Write(ctx context.Context, changes ...persistence.Change) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := persistence.ValidateChanges(changes); err != nil {
		return fmt.Errorf("bolt: write: %w", err)
	}
	for i := range changes {
		if !changes[i].Fence.IsZero() {
			// One process has no leases: refuse a promise it cannot keep
			// rather than ignore it.
			return fmt.Errorf("%w: bolt: write: change %d: handler %q: a fenced change needs a store with leases (PostgreSQL)", persistence.ErrInvalid, i, changes[i].Handler.ID)
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if err := s.update(func(tx *bolt.Tx) error { return applyChanges(tx, changes) }); err != nil {
		return fmt.Errorf("bolt: write: %w", storageError(err))
	}
	return nil
}

// update runs fn in a write transaction shared with concurrent callers
// (Write, Publish) and returns when it has committed. fn may run more than
// once (see Write), so it must derive everything from the transaction.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	switch {
	case s.group != nil:
		return s.group.do(fn)
	case s.writers.Add(1) == 1:
		// DB.Batch delays a commit up to MaxBatchDelay to collect
		// writers; the only write in flight has nobody to wait for.
		defer s.writers.Add(-1)
		return s.updateDB(fn)
	default:
		defer s.writers.Add(-1)
		// DB.Batch may run fn on a goroutine of its own, which withDB's
		// guard does not cover.
		guarded := func(tx *bolt.Tx) error { return guard(s.path, func() error { return fn(tx) }) }
		return s.withDB(func(db *bolt.DB) error { return db.Batch(guarded) })
	}
}

// applyChanges applies changes in order, so a later change sees an earlier
// one's effect on the same handler.
func applyChanges(tx *bolt.Tx, changes []persistence.Change) error {
	d := counters{}
	for i := range changes {
		if err := applyChange(tx, &changes[i], d); err != nil {
			return fmt.Errorf("change %d: %w", i, err)
		}
	}
	return d.flush(tx)
}

func applyChange(tx *bolt.Tx, c *persistence.Change, d counters) error {
	st := readStored(tx, c.Handler.ID)
	if err := c.CheckStored(st.exists(), &st.old, st.old.Revision, st.oldErr); err != nil {
		return err
	}
	if c.Delete {
		return deleteHandler(tx, c.Handler.ID, st.entries(tx, c.Handler.ID), d)
	}
	return putHandler(tx, c, &st, d)
}

// storedHandler is a handler as stored when a change of it is applied.
type storedHandler struct {
	raw    []byte // its metadata; nil: there is no handler
	old    persistence.Handler
	oldErr error // why raw cannot be decoded
}

// readStored reads handler id. One lookup serves the existence check, the
// old index entries and the unchanged-metadata check of putHandler (each
// bbolt lookup is a cursor seek).
func readStored(tx *bolt.Tx, id string) storedHandler {
	st := storedHandler{raw: bucket(tx, bucketHandlers).Get([]byte(id))}
	if st.raw != nil {
		st.old, st.oldErr = codec.DecodeStoredHandler(id, st.raw)
	}
	return st
}

func (st *storedHandler) exists() bool { return st.raw != nil }

// entries returns the stored handler's index entries (none if there is
// none), from its metadata or, if that is corrupt, from the indexes
// themselves, so that overwriting or deleting it repairs the handler.
func (st *storedHandler) entries(tx *bolt.Tx, id string) []entry {
	switch {
	case !st.exists():
		return nil
	case st.oldErr != nil:
		return scanEntries(tx, id)
	default:
		return entriesOf(&st.old)
	}
}

// lastSeq returns the sequence number of the stored handler's last
// record, from its metadata or, if that is corrupt, from its records.
func (st *storedHandler) lastSeq(tx *bolt.Tx, id string) uint64 {
	switch {
	case !st.exists():
		return 0
	case st.oldErr != nil:
		return lastRecordSeq(tx, id)
	default:
		return st.old.LastSeq
	}
}

// putHandler applies a change that is not a Delete to the handler st.
func putHandler(tx *bolt.Tx, c *persistence.Change, st *storedHandler, d counters) error {
	id := c.Handler.ID
	key := []byte(id)
	oldEntries := st.entries(tx, id)
	h := c.Handler
	h.LastSeq = st.lastSeq(tx, id)
	if err := c.CheckRecords(h.LastSeq); err != nil {
		return err
	}
	if err := putRecords(tx, id, c.Records); err != nil {
		return err
	}
	if n := len(c.Records); n > 0 {
		h.LastSeq = c.Records[n-1].Seq
	}
	// The revision is the transaction's id (bbolt gives every write
	// transaction a new one). Unchanged metadata is not rewritten, so its
	// page stays clean.
	changed := !st.exists() || st.oldErr != nil || c.Snapshot != nil || len(c.Records) > 0
	enc, changed, err := backend.EncodeRevised(&h, st.raw, st.old.Revision, uint64(tx.ID()), changed)
	if err != nil {
		return err
	}
	if changed {
		if err := bucket(tx, bucketHandlers).Put(key, enc); err != nil {
			return fmt.Errorf("handler %q: put metadata: %w", id, err)
		}
	}
	if c.Snapshot != nil {
		if err := bucket(tx, bucketSnapshots).Put(key, c.Snapshot); err != nil {
			return fmt.Errorf("handler %q: put snapshot: %w", id, err)
		}
	}
	if err := updateEntries(tx, oldEntries, entriesOf(&h), d); err != nil {
		return fmt.Errorf("handler %q: %w", id, err)
	}
	for i := range c.Tasks {
		if err := putTask(tx, &c.Tasks[i], d); err != nil {
			return fmt.Errorf("handler %q: %w", id, err)
		}
	}
	if !st.exists() {
		d[counterHandlers]++
	}
	return nil
}

// putRecords appends records to handler id's stream.
func putRecords(tx *bolt.Tx, id string, records []persistence.Record) error {
	b := bucket(tx, bucketRecords)
	for _, r := range records {
		data := r.Data
		if data == nil {
			data = []byte{}
		}
		if err := b.Put(recordKey(id, r.Seq), data); err != nil {
			return fmt.Errorf("handler %q: put record %d: %w", id, r.Seq, err)
		}
	}
	return nil
}

func deleteHandler(tx *bolt.Tx, id string, entries []entry, d counters) error {
	key := []byte(id)
	if err := bucket(tx, bucketHandlers).Delete(key); err != nil {
		return fmt.Errorf("handler %q: delete metadata: %w", id, err)
	}
	if err := bucket(tx, bucketSnapshots).Delete(key); err != nil {
		return fmt.Errorf("handler %q: delete snapshot: %w", id, err)
	}
	// Seek again after each delete: advancing a bbolt cursor after
	// Cursor.Delete can skip a key.
	prefix := recordPrefix(id)
	c := bucket(tx, bucketRecords).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return fmt.Errorf("handler %q: delete records: %w", id, err)
		}
	}
	if err := updateEntries(tx, entries, nil, d); err != nil {
		return fmt.Errorf("handler %q: %w", id, err)
	}
	if err := deleteTasks(tx, id, d); err != nil {
		return fmt.Errorf("handler %q: %w", id, err)
	}
	d[counterHandlers]--
	return nil
}

// lastRecordSeq returns the sequence number of the handler's last record,
// 0 if it has none.
func lastRecordSeq(tx *bolt.Tx, id string) uint64 {
	prefix := recordPrefix(id)
	c := bucket(tx, bucketRecords).Cursor()
	k, _ := c.Seek(prefixEnd(prefix))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) || len(k) != len(prefix)+8 {
		return 0
	}
	return binary.BigEndian.Uint64(k[len(prefix):])
}
