// Package bolt is wfd's default persistence.Store: one bbolt file (by
// default ./data/wfd.db), embedded in the server process.
//
// # Layout
//
// Each kind of data has its own top-level bucket, so a scan of one never
// reads pages of another. Keys are built so that byte order is scan order;
// "|" below is concatenation, 0 a single zero byte (persistence forbids 0
// bytes in the strings used here), time a 12-byte sortable time (big-endian
// seconds with the sign bit flipped, then big-endian nanoseconds) and seq a
// big-endian uint64.
//
//	handlers       id                        → HandlerMeta (protobuf, wfd.storage.v1)
//	snapshots      id                        → snapshot bytes
//	records        id|0|seq                  → record bytes
//	idx_created    order                     → ""
//	idx_status     status byte|order         → ""
//	idx_workflow   workflow|0|order          → ""
//	idx_residency  residency byte|order      → ""
//	idx_idle       order                     → time (IdleSince)
//	idx_idle_time  time|id                   → ""
//	idx_workflow_version  workflow|0|version|0|status|0|residency|0|order → ""
//	idx_timers     time|handler|0|waiter     → ""
//	idx_wait_keys  key|0|handler|0|waiter    → ""
//	meta           "schema"                  → uint32 layout version
//	               "count/..."               → int64 counters (see Count)
//
// where order is a handler's order key time(CreatedAt)|id. The schema
// version is wfd's mark on the file, written in the transaction that
// creates the buckets: Open takes a file without it as new only if it has
// no buckets, and refuses one with buckets as another program's
// (ForeignFileError), without writing to it.
//
//	tasks              id                                → TaskMeta (protobuf)
//	idx_task_status    status byte|time|id               → ""
//	idx_task_assignee  status byte|assignee|0|time|id    → ""
//	idx_task_workflow  workflow|0|time|id                → ""
//	idx_task_handler   handler|0|time|id                 → ""
//
//	published          seq                               → PublishedEvent (protobuf)
//	idx_published_id   id                                → seq
//	idx_published_key  key|0|handler|0|time|seq          → "" (handler "" for global)
//
//	workflows          name|0|version                    → WorkflowDef (protobuf)
//
//	schedules          id                                → Schedule (JSON, see codec)
//	idx_schedule_due   time(NextTick)|id                 → "" (schedules not paused with a next tick)
//
//	idx_attr           workflow|0|name|0|value|time|id   → "" (search attributes; value: attrs.AppendKey,
//	                                                        one entry per keyword_list item)
//
// A ListHandlers with Query.Where joins one more stream, the term
// backend.DriveTerm picks: an attribute's = or in is one prefix of
// idx_attr per value, contains the item's prefix, a range a scan of the
// range (its order keys sorted newest first: cost the size of the range);
// workflow and status terms are their indexes' prefixes, a created_at
// range a bounded walk of idx_created. Each handler the join yields is
// read and kept if Match holds, until the page is full.
//
// ListHandlers lists newest first by creation time, whatever the ids
// (callers may choose them), so every index it reads ends in the handler's
// order key and is walked backwards: idx_created alone without filters, a
// prefix of the others for a filter. A query with several filters
// intersects them with a leapfrog join (each cursor seeks to the others'
// position), so it reads index keys only, and decodes metadata only for the
// handlers it returns; a page token holds the last order key listed. idx_idle
// exists beside idx_idle_time for that reason: it keeps idle handlers in
// creation order, with IdleSince as value for the IdleFor filter. The two
// time-ordered indexes (idx_idle_time, idx_timers) answer "what is due" and
// "who has been idle longest". Files of schema 1 and 2 had these indexes in
// id order; Open rewrites them in its first transaction (migrate.go).
//
// Tasks are ordered the same way: every task index ends in the task's
// order key time(CreatedAt)|id, and ListTasks runs the same leapfrog join
// over order keys, backwards for newest first. Every task
// has exactly one entry in each task index (an unassigned one under
// assignee ""). The assignee index leads with the status, so "pending tasks
// of X" is one key range however many tasks others have; an assignee
// without a status filter is the union of the four status ranges, and so is
// a listing without filters over idx_task_status, which therefore needs no
// index by time alone. Upserts move only the entries that changed (a
// status or assignee change moves two, the workflow and handler entries
// stay), and deleting a handler deletes the tasks idx_task_handler lists.
//
// The published-event log is keyed by a global sequence number (the log
// bucket's NextSequence), so PublishedAfter is a range scan. FindPublished
// seeks idx_published_key twice, once under the handler's prefix and once
// under the global one, to the first entry at or after since; the older of
// the two is the answer, so it never scans the events of a key.
// ListPublished (latest first) reads one of idx_published_time (time|seq),
// idx_published_by_key (key|0|time|seq), idx_published_handler
// (handler|0|time|seq) or, for a key and a handler, idx_published_key,
// backwards from the end of the filter's prefix, and stops at since: one
// key's latest events cost what is returned, whatever the log's size.
// Deleting a handler leaves the log alone: it is immutable.
//
// idx_finished (time(CompletedAt)|id) holds every finished handler, so
// FinishedBefore, the retention sweep's scan, is a range scan from the
// oldest; a delete removes the entry with the handler's other entries.
//
// Workflow definitions are few (a few versions per remote workflow) and
// read whole: the workflows bucket has no index, the versions of a name
// are one prefix, and which one is current is a field of each record.
// PutWorkflow, SetCurrentWorkflow and DeleteWorkflow commit through the
// group commit like Publish, and check their condition (the stored hash)
// and move the current mark inside the transaction.
//
// Schedules are few and small. idx_schedule_due holds one entry per
// schedule that can come due, changed with the schedule in one
// transaction, so DueSchedules reads the index from its first key and
// stops at the first later than asked. A schedule's Revision is the next
// value of the schedules bucket's sequence: never reused, even for a
// schedule deleted and created again, so UpdateSchedule's condition
// cannot mistake one for the other.
//
// idx_workflow_version answers a listing by workflow version (one prefix
// per status and residency, joined like the status filter) and
// CountVersions, which counts its keys under workflow|0 without reading
// metadata.
//
// Stream records share one key space (id|0|seq) instead of a nested bucket
// per handler: bbolt gives every nested bucket that outgrows a quarter page
// its own root page, so 100k handlers with short streams would waste most of
// a page each, while one key space packs the records of many handlers into
// shared pages. UUIDv7 ids keep a handler's records contiguous and new
// handlers at the end of the key space, where appends are cheap.
//
// # Commits
//
// Concurrent writers share commits, because one fsync costs far more than
// the work around it. The store's own group commit starts a commit as soon
// as the previous one ends and takes every Write that queued meanwhile:
// under load commits grow, and a lone writer never waits. bbolt's DB.Batch
// (Options.BoltBatch) instead waits for a timer before committing, which
// at low and moderate concurrency costs more than batching gains
// (BenchmarkWrite measures both). Index entries and counters are updated
// in the same transaction as the metadata, so they cannot drift from it.
//
// # Damage
//
// bbolt trusts its file. Open validates it first (validate.go), every
// transaction runs under guard (damage.go), which turns a fault reading a
// mapped page or a bbolt panic into a DamagedError for that call (a
// Write's changes too: a commit that must rewrite a damaged page fails
// with ErrCorrupt, not ErrUnavailable, so the caller learns that data is
// damaged rather than that the store is down; commit.go), and Check
// reads the whole file offline. An open file in use by another
// process fails with an InUseError naming it.
package bolt
