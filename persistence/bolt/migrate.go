package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// migrateHandlerOrder rewrites the handler indexes of a schema 1 or 2 file,
// whose keys end in the handler id, so that they end in the handler's order
// key time(CreatedAt)|id, and fills idx_created from the metadata. It runs
// in Open's transaction: if it fails, the file stays as it was.
//
// Every entry is carried over, so the counters, which count entries, stay
// right: those of a handler whose metadata cannot be decoded, and stale
// ones naming no handler, get the zero time (they list last, and listing
// reports them as before). Malformed keys are dropped.
func migrateHandlerOrder(tx *bolt.Tx) error {
	created := make(map[string]time.Time)
	c := bucket(tx, bucketHandlers).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var t time.Time
		if h, err := codec.DecodeStoredHandler(string(k), v); err == nil {
			t = h.CreatedAt
		}
		created[string(k)] = t
	}
	// order appends id's order key to prefix.
	order := func(prefix, id []byte) []byte {
		return append(slices.Clip(prefix), orderKey(created[string(id)], string(id))...)
	}

	var entries []entry
	for id := range created {
		entries = append(entries, entry{key: orderKey(created[id], id), value: []byte{}})
	}
	if err := rewriteBucket(tx, bucketCreated, entries); err != nil {
		return err
	}
	// Each old key, split into the prefix it keeps and the id it ends in.
	split := map[string]func(k []byte) (prefix, id []byte, ok bool){
		bucketStatus:    splitByteID,
		bucketResidency: splitByteID,
		bucketWorkflow: func(k []byte) ([]byte, []byte, bool) {
			i := bytes.IndexByte(k, 0)
			return k[:i+1], k[i+1:], i >= 0 && i+1 < len(k)
		},
		bucketIdle: func(k []byte) ([]byte, []byte, bool) { return nil, k, len(k) > 0 },
	}
	for _, name := range []string{bucketStatus, bucketResidency, bucketWorkflow, bucketIdle} {
		entries = entries[:0]
		c := bucket(tx, name).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if prefix, id, ok := split[name](k); ok {
				entries = append(entries, entry{key: order(prefix, id), value: bytes.Clone(v)})
			}
		}
		if err := rewriteBucket(tx, name, entries); err != nil {
			return err
		}
	}
	return nil
}

// migrateRunFields rewrites, in a schema 3 or older file, the metadata of
// encoding version 1 as version 2 (codec.DecodeHandler moves the
// pseudo-waiters "~external/<type>" and "~timeout" into External and
// Deadline), and moves the run deadline's timer entries from waiter
// "~timeout" to no waiter, where entriesOf puts them now. Metadata that
// cannot be decoded is left as it is (reads report it, a write repairs it).
// It runs in Open's transaction: if it fails, the file stays as it was.
func migrateRunFields(tx *bolt.Tx) error {
	b := bucket(tx, bucketHandlers)
	type rewrite struct{ key, value []byte }
	var metas []rewrite
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		h, err := codec.DecodeStoredHandler(string(k), v)
		if err != nil {
			continue
		}
		raw, err := codec.EncodeHandler(&h)
		if err != nil {
			return err
		}
		if !bytes.Equal(raw, v) {
			metas = append(metas, rewrite{bytes.Clone(k), raw})
		}
	}
	// Puts after the scan: a cursor must not see the bucket change under it.
	for _, m := range metas {
		if err := b.Put(m.key, m.value); err != nil {
			return fmt.Errorf("rewrite handler %q: %w", m.key, err)
		}
	}
	timers := bucket(tx, bucketTimers)
	var moved [][]byte
	c = timers.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if _, _, waiter, ok := parseTimerKey(k); ok && codec.IsV1TimeoutWaiter(waiter) {
			moved = append(moved, bytes.Clone(k))
		}
	}
	for _, k := range moved {
		due, handler, _, _ := parseTimerKey(k)
		if err := timers.Delete(k); err != nil {
			return fmt.Errorf("move timer of handler %q: %w", handler, err)
		}
		if err := timers.Put(timerKey(due, handler, ""), []byte{}); err != nil {
			return fmt.Errorf("move timer of handler %q: %w", handler, err)
		}
	}
	return nil
}

// splitByteID splits a key status|id or residency|id.
func splitByteID(k []byte) (prefix, id []byte, ok bool) {
	if len(k) < 2 {
		return nil, nil, false
	}
	return k[:1], k[1:], true
}

// rewriteBucket replaces the content of bucket name by entries. The keys are
// put in order, so that pages fill up to fillPercent.
func rewriteBucket(tx *bolt.Tx, name string, entries []entry) error {
	if err := tx.DeleteBucket([]byte(name)); err != nil {
		return fmt.Errorf("delete bucket %s: %w", name, err)
	}
	if _, err := tx.CreateBucket([]byte(name)); err != nil {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	b := bucket(tx, name)
	for _, e := range entries {
		value := e.value
		if value == nil {
			value = []byte{}
		}
		if err := b.Put(e.key, value); err != nil {
			return fmt.Errorf("put %s entry: %w", name, err)
		}
	}
	return nil
}

// migrateListIndexes fills the indexes schema 6 added: idx_finished from
// the handlers' metadata (metadata that cannot be decoded is left out, as
// its other entries would be: a write repairs it) and the published-event
// listing indexes from the log (entries that cannot be decoded are left
// out; listing could not return them anyway). It runs in Open's
// transaction: if it fails, the file stays as it was.
func migrateListIndexes(tx *bolt.Tx) error {
	var finished []entry
	c := bucket(tx, bucketHandlers).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		h, err := codec.DecodeStoredHandler(string(k), v)
		if err != nil {
			continue
		}
		for _, e := range entriesOf(&h) {
			if e.bucket == bucketFinished {
				finished = append(finished, e)
			}
		}
	}
	if err := rewriteBucket(tx, bucketFinished, finished); err != nil {
		return err
	}
	c = bucket(tx, bucketPublished).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			continue
		}
		p, err := codec.DecodeStoredPublished(binary.BigEndian.Uint64(k), v)
		if err != nil {
			continue
		}
		if err := putPublishedListEntries(tx, &p); err != nil {
			return err
		}
	}
	return nil
}

// migrateWorkflowVersions brings a schema 6 or older file to versions:
// each definition stored under its name moves to name|0|version, its
// Version the first 16 characters of its Hash and Current set (it was the
// one definition of its name), and idx_workflow_version is filled from
// the handlers' metadata (metadata that cannot be decoded is left out, as
// its other entries would be: a write repairs it). A definition that
// cannot be decoded moves, as it is, to name|0 (no version): listing
// reports it as corrupt, and deleting every version of its name removes
// it, as deleting the name did before. It runs in Open's transaction: if
// it fails, the file stays as it was.
func migrateWorkflowVersions(tx *bolt.Tx) error {
	b := bucket(tx, bucketWorkflows)
	type rewrite struct{ old, key, value []byte }
	var defs []rewrite
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if bytes.IndexByte(k, 0) >= 0 {
			continue // already name|0|version
		}
		r := rewrite{old: bytes.Clone(k), key: workflowDefPrefix(string(k)), value: bytes.Clone(v)}
		if d, err := codec.DecodeWorkflowDef(v); err == nil && d.Name == string(k) {
			d.Version = d.Hash[:min(16, len(d.Hash))] // Validate: never empty
			d.Current = true
			enc, err := codec.EncodeWorkflowDef(&d)
			if err != nil {
				return err
			}
			r.key, r.value = workflowDefKey(d.Name, d.Version), enc
		}
		defs = append(defs, r)
	}
	// Writes after the scan: a cursor must not see the bucket change under it.
	for _, r := range defs {
		if err := b.Delete(r.old); err != nil {
			return fmt.Errorf("move workflow %q: %w", r.old, err)
		}
		if err := b.Put(r.key, r.value); err != nil {
			return fmt.Errorf("move workflow %q: %w", r.old, err)
		}
	}
	var versions []entry
	c = bucket(tx, bucketHandlers).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		h, err := codec.DecodeStoredHandler(string(k), v)
		if err != nil {
			continue
		}
		for _, e := range entriesOf(&h) {
			if e.bucket == bucketVersion {
				versions = append(versions, e)
			}
		}
	}
	return rewriteBucket(tx, bucketVersion, versions)
}
