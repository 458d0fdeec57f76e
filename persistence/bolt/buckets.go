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
	bucketCreated   = "idx_created"
	bucketStatus    = "idx_status"
	bucketWorkflow  = "idx_workflow"
	bucketResidency = "idx_residency"
	bucketIdle      = "idx_idle"
	bucketIdleTime  = "idx_idle_time"
	bucketTimers    = "idx_timers"
	bucketWaitKeys  = "idx_wait_keys"
	bucketMeta      = "meta"
	bucketFinished  = "idx_finished"
	// bucketVersion keys workflow|0|version|0|status|0|residency|0|order:
	// a handler listing by workflow version reads one prefix per status and
	// residency, and CountVersions counts keys without reading metadata.
	bucketVersion = "idx_workflow_version"

	bucketTasks        = "tasks"
	bucketTaskStatus   = "idx_task_status"
	bucketTaskAssignee = "idx_task_assignee"
	bucketTaskWorkflow = "idx_task_workflow"
	bucketTaskHandler  = "idx_task_handler"

	bucketPublished    = "published"
	bucketPublishedID  = "idx_published_id"
	bucketPublishedKey = "idx_published_key"
	// The listing indexes of the log (ListPublished), all ending in
	// time(at)|seq so that latest first is a reverse range scan.
	bucketPublishedTime    = "idx_published_time"
	bucketPublishedByKey   = "idx_published_by_key"
	bucketPublishedHandler = "idx_published_handler"

	bucketWorkflows = "workflows"

	// Schedules (schedules.go): id → schedule, and time(NextTick)|id of
	// those that are due some time.
	bucketSchedules   = "schedules"
	bucketScheduleDue = "idx_schedule_due"

	// Search attributes (attrkeys.go): workflow|0|name|0|value|order.
	bucketAttr = "idx_attr"

	// Concurrency keys (slots.go).
	bucketSlotKeys    = "slot_keys"
	bucketSlotEntries = "slot_entries"
	bucketSlotIDs     = "slot_ids"
	bucketSlotDue     = "idx_slot_due"
	bucketSlotPending = "idx_slot_pending"
)

// fillPercent is how full bbolt fills a page before it splits one. Keys
// here mostly arrive in order (UUIDv7 ids, sequence numbers, times), where
// bbolt's default of half leaves every page half empty.
const fillPercent = 0.9

// bucket returns one of the buckets initSchema creates.
func bucket(tx *bolt.Tx, name string) *bolt.Bucket {
	b := tx.Bucket([]byte(name))
	if b != nil && tx.Writable() {
		b.FillPercent = fillPercent
	}
	return b
}

// allBuckets lists every bucket Open creates.
func allBuckets() []string {
	return []string{
		bucketHandlers, bucketSnapshots, bucketRecords,
		bucketCreated, bucketStatus, bucketWorkflow, bucketResidency, bucketIdle, bucketIdleTime,
		bucketTimers, bucketWaitKeys, bucketMeta, bucketFinished, bucketVersion,
		bucketTasks, bucketTaskStatus, bucketTaskAssignee, bucketTaskWorkflow, bucketTaskHandler,
		bucketPublished, bucketPublishedID, bucketPublishedKey,
		bucketPublishedTime, bucketPublishedByKey, bucketPublishedHandler,
		bucketWorkflows,
		bucketSchedules, bucketScheduleDue, bucketAttr,
		bucketSlotKeys, bucketSlotEntries, bucketSlotIDs, bucketSlotDue, bucketSlotPending,
	}
}

// createdOnOpen reports whether bucket name is one that Open creates in a
// file of any schema version without migrating it (see schemaVersion), so
// that a file an older wfd wrote lacks it and is sound.
func createdOnOpen(name string) bool {
	switch name {
	case bucketSchedules, bucketScheduleDue, bucketAttr, bucketSlotKeys, bucketSlotEntries, bucketSlotIDs, bucketSlotDue, bucketSlotPending:
		return true
	}
	return false
}

// schemaVersion is the version of the bucket and key layout. A file with a
// newer version was written by a newer wfd and is refused rather than
// misread; a layout change bumps it and migrates older files in initSchema.
//
// Version 2 added the task and published-event buckets. Version 1 files
// migrate by creating them (empty); the bump keeps a version 1 wfd from
// opening a file whose handler deletes must also delete tasks.
//
// Version 3 orders the handler indexes by creation time instead of id
// (idx_created is new; idx_status, idx_workflow, idx_residency and idx_idle
// end in time|id instead of id), so that newest first means newest whatever
// ids callers choose. Older files migrate by rewriting those indexes
// (migrateHandlerOrder).
//
// Version 4 stores handler metadata of encoding version 2, which keeps an
// idle handler's outside event types and its run deadline in fields, and
// indexes the run deadline as a timer with no waiter id; version 3 kept
// them as pseudo-waiters and indexed the deadline under waiter "~timeout".
// Older files migrate by rewriting the metadata and those timer entries
// (migrateRunFields).
//
// Version 5 added the workflows bucket (the definitions of remote
// workflows). Older files migrate by creating it. The bump is what keeps
// an older wfd from opening a file that has definitions: it would ignore
// the bucket, but not the handlers of those workflows, which it cannot
// restore without them and marks failed for good (an unknown workflow)
// the first time it loads one.
//
// Version 6 added idx_finished (finished handlers by completion time, for
// retention) and the published-event listing indexes (idx_published_time,
// idx_published_by_key, idx_published_handler). Older files migrate by
// filling them from the metadata and the log (migrateListIndexes); the
// bump keeps an older wfd, which would not maintain them, from opening
// the file.
//
// Version 7 keys the workflows bucket by name|0|version (a name has
// several versions, one of them current) and added idx_workflow_version
// (handlers by workflow, version, status and residency). Older files
// migrate by rewriting each definition under its name as a current
// version named after the first 16 characters of its hash, and by
// filling the index from the metadata (migrateWorkflowVersions); the bump
// keeps an older wfd, which would read the new keys as names, from
// opening the file.
//
// Version 8 added idx_attr (handlers by search attribute, for
// Query.Where). Older files have nothing to migrate, since no wfd before
// it stored attributes: Open creates the bucket empty. The bump keeps an
// older wfd from opening the file: it would drop the handlers'
// attributes when it rewrites their metadata, and leave their idx_attr
// entries behind.
//
// Version 9 added the concurrency key buckets (slot_keys, slot_entries,
// slot_ids, idx_slot_due, idx_slot_pending) and handlers that wait in a key's queue, whose
// snapshots hold back their events until they are admitted. Older files
// have nothing to migrate: Open creates the buckets empty. The bump keeps
// an older wfd from opening the file: it would run a queued handler's
// held events never, and never release a finished handler's slot.
//
// The schedule buckets (schedules, idx_schedule_due) came without a new
// version: Open creates them, empty, in a file of version 7, and an older
// wfd that opens a file with schedules ignores them. It starts no
// scheduled runs, which no version bump could give it, and changes
// nothing a newer wfd reads from those buckets, so refusing the file
// would protect nothing and would stop a rollback.
const schemaVersion = 9

const keySchema = "schema"

// initSchema creates missing buckets, checks the layout version and
// migrates older layouts. A file without the schema version is new only if
// it has no buckets: one that has some is another program's, and is
// refused (ForeignFileError) before anything is written to it. Every wfd,
// from the first layout on, wrote the version in the transaction that
// created its buckets.
func initSchema(tx *bolt.Tx) error {
	var version uint32 // 0: a new file
	if meta := bucket(tx, bucketMeta); meta != nil {
		if v := meta.Get([]byte(keySchema)); v != nil {
			if len(v) != 4 {
				return fmt.Errorf("%w: schema version has %d bytes", persistence.ErrCorrupt, len(v))
			}
			version = binary.BigEndian.Uint32(v)
		}
	}
	if version == 0 {
		if err := checkEmpty(tx); err != nil {
			return err
		}
	}
	if version > schemaVersion {
		return fmt.Errorf("%w: schema version %d, this wfd reads version %d", persistence.ErrCorrupt, version, schemaVersion)
	}
	for _, name := range allBuckets() {
		if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	if version == schemaVersion {
		return nil
	}
	// A new file, or an older layout. Versions 1 and 2 lacked buckets,
	// which the loop above created, and kept the handler indexes in id
	// order. In a new file the buckets are empty and this does nothing.
	if version < 3 {
		if err := migrateHandlerOrder(tx); err != nil {
			return fmt.Errorf("migrate schema %d to %d: %w", version, schemaVersion, err)
		}
	}
	if version < 4 {
		if err := migrateRunFields(tx); err != nil {
			return fmt.Errorf("migrate schema %d to %d: %w", version, schemaVersion, err)
		}
	}
	// Version 4 only lacked the workflows bucket, created above.
	if version < 6 {
		if err := migrateListIndexes(tx); err != nil {
			return fmt.Errorf("migrate schema %d to %d: %w", version, schemaVersion, err)
		}
	}
	if version < 7 {
		if err := migrateWorkflowVersions(tx); err != nil {
			return fmt.Errorf("migrate schema %d to %d: %w", version, schemaVersion, err)
		}
	}
	return bucket(tx, bucketMeta).Put([]byte(keySchema), binary.BigEndian.AppendUint32(nil, schemaVersion))
}

// checkEmpty refuses a file without wfd's schema version that has buckets:
// a ForeignFileError (its Path left to Open) naming them.
func checkEmpty(tx *bolt.Tx) error {
	var foreign ForeignFileError
	_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		if len(foreign.Buckets) < maxForeignBuckets {
			foreign.Buckets = append(foreign.Buckets, string(name))
		} else {
			foreign.More++
		}
		return nil
	})
	if len(foreign.Buckets) > 0 {
		return &foreign
	}
	return nil
}
