package bolt

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
)

// Bucket names; see the package documentation for their keys.
const (
	bucketHandlers  = "handlers"
	bucketSnapshots = "snapshots"
	bucketRecords   = "records"
	bucketStatus    = "idx_status"
	bucketWorkflow  = "idx_workflow"
	bucketResidency = "idx_residency"
	bucketIdle      = "idx_idle"
	bucketIdleTime  = "idx_idle_time"
	bucketTimers    = "idx_timers"
	bucketWaitKeys  = "idx_wait_keys"
	bucketMeta      = "meta"
)

// bucket returns one of the buckets initSchema creates.
func bucket(tx *bolt.Tx, name string) *bolt.Bucket {
	return tx.Bucket([]byte(name))
}

// allBuckets lists every bucket Open creates.
func allBuckets() []string {
	return []string{
		bucketHandlers, bucketSnapshots, bucketRecords,
		bucketStatus, bucketWorkflow, bucketResidency, bucketIdle, bucketIdleTime,
		bucketTimers, bucketWaitKeys, bucketMeta,
	}
}

// schemaVersion is the version of the bucket and key layout. A file with a
// newer version was written by a newer wfd and is refused rather than
// misread; a future layout change bumps it and migrates older files in
// initSchema.
const schemaVersion = 1

const keySchema = "schema"

// initSchema creates missing buckets and checks the layout version.
func initSchema(tx *bolt.Tx) error {
	for _, name := range allBuckets() {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	meta := bucket(tx, bucketMeta)
	v := meta.Get([]byte(keySchema))
	switch {
	case v == nil:
		return meta.Put([]byte(keySchema), binary.BigEndian.AppendUint32(nil, schemaVersion))
	case len(v) != 4:
		return fmt.Errorf("%w: schema version has %d bytes", persistence.ErrCorrupt, len(v))
	case binary.BigEndian.Uint32(v) != schemaVersion:
		return fmt.Errorf("%w: schema version %d, this wfd reads version %d", persistence.ErrCorrupt, binary.BigEndian.Uint32(v), schemaVersion)
	}
	return nil
}
