// Package postgres is a persistence.Store on PostgreSQL (pgx v5, a
// connection pool), for deployments that keep their state in a database
// they already run and back up. bbolt (persistence/bolt) stays the
// embedded default.
//
// # Schema
//
// Open applies the embedded migrations (migrations/*.sql, with goose,
// under an advisory lock) and refuses a database migrated by a newer
// wfd. Every table is prefixed wfd_. Ids, names and keys are text
// COLLATE "C", so they order by bytes as in bbolt; a time is a
// timestamptz (microseconds) and a smallint of the nanoseconds below it,
// so it orders and round-trips exactly.
//
//	wfd_handlers   id → meta (HandlerMeta protobuf, as in bbolt) and the
//	               columns the indexes need: workflow, status, residency,
//	               owner, created, idle_since, completed, last_seq
//	wfd_snapshots  handler_id → data
//	wfd_records    (handler_id, seq) → data
//	wfd_timers     (handler_id, waiter_id) → due ("" is the handler's Deadline)
//	wfd_wait_keys  (handler_id, waiter_id) → key
//	wfd_tasks      id → meta (TaskMeta) and handler_id, workflow, status,
//	               assignee, created
//	wfd_published  seq → entry (PublishedEvent) and id (unique), key,
//	               handler_id, at; wfd_published_seq holds the last seq
//	wfd_workflows  name → hash, def (WorkflowDef)
//	wfd_counter_deltas name, n: deltas appended by statement triggers,
//	               summed by Count, folded now and then (counters.go)
//	wfd_handler_attrs handler_id, name, typ → str, num or ts: the search
//	               attributes of a handler (also in its meta), one row per
//	               value, one per distinct item of a keyword_list, with the
//	               handler's workflow and created (migration 00008)
//
// The indexes are bbolt's, as SQL: every listing index ends in
// (created_at, created_ns, id), so a filtered listing, newest first, is
// a backward range scan of one index that stops after a page; the idle
// index (idle_since, idle_ns, id) and the finished index (completed_at,
// completed_ns, id) are partial; wfd_timers_due (due_at, due_ns,
// handler_id, waiter_id) answers DueTimers and wfd_wait_keys_key (key,
// handler_id) WaitingFor. Record sequence numbers (uint64) are stored
// with the top bit flipped, which keeps their order in a bigint.
//
// # Search attributes
//
// ListHandlers answers Query.Where through an index (listwhere.go): the
// term of its condition backend.DriveTerm picks selects the candidates,
// newest first, and the whole condition filters them in Go
// (attrs.Query.Match), so a query means in PostgreSQL exactly what it
// means in bbolt, with no SQL NULL logic. An attribute's term reads
// wfd_handler_attrs through one of its indexes (workflow, name, typ,
// str|num|ts, created_at, created_ns, handler_id), partial on the column
// being set: ints (exact within ±2^53), doubles and bools (0, 1) share
// num and are told apart by typ; strings and keyword_list items are str,
// COLLATE "C"; times are ts. An = of one value reads the index backwards
// and stops after a batch; in and ranges sort the keys they select. Only
// those keys are sorted: the handlers' rows are read for the batch, and
// the query's other filters are a CASE over them. A workflow or status
// term, or a created_at range, reads wfd_handlers' own indexes.
// Candidates are read in growing batches until the page has its
// handlers and one more; the page token is the last one's position, as
// in other listings, bound to the query's Where. An ordered listing reads
// every match (at most persistence.MaxOrderedMatches), sorts them, and
// continues after the last handler listed (a token of kind 'o').
//
// Write keeps a handler's rows: they are replaced when its attributes,
// workflow or creation time change (most changes leave them alone, and
// then the rows are not touched), and deleted with the handler.
//
// # Commits
//
// A Write is one transaction, acknowledged after COMMIT returns, so with
// PostgreSQL's default synchronous_commit = on, after its WAL is flushed
// to disk (and to a synchronous standby, if the server has one). The
// server's journal already gathers many handlers' changes into one Write;
// the store makes that cheap: two round trips per Write whatever its size
// (lock and read the stored rows; then one multi-row statement per kind
// of row and COMMIT, pipelined), see Write. PostgreSQL shares WAL flushes
// between concurrent commits itself. Publishes are numbered under a lock
// held until COMMIT (so in commit order), and concurrent ones share a
// transaction (publisher.go).
// A COMMIT whose answer is lost with its connection is looked up with
// txid_status rather than reported failed (outcome.go).
//
// Counters are updated by statement-level triggers in the transaction
// that changes what they count, so they cannot drift from the rows. They
// are single rows, so concurrent writers serialise on them: with one wfd
// process (one journal) that costs nothing; several replicas (a later
// step) may want them sharded.
//
// # Errors
//
// A database that cannot be reached, a broken connection, a commit that
// outlives Options.WriteTimeout: ErrUnavailable. A string PostgreSQL
// refuses (not UTF-8) or a row too large for an index: ErrInvalid.
//
// # Several replicas: leases and fencing
//
// lease.go implements persistence.Leaser on two tables of migration
// 00002: wfd_replicas (id, address, started, expires) and wfd_leases
// (handler_id, owner, token, acquired, expires), every time from the
// database's now(). A fenced Change (Change.Fence) is checked in Write's
// first round trip, which reads the lease rows FOR SHARE after the
// handler rows: a lease taken over since (a higher token) fails the
// whole Write with ErrFenced. Migration 00003 adds wfd_lease_tokens, the
// sequence every new token comes from, so a deleted handler's lease row
// can go with it (write.go). claim.go implements persistence.Claimer: due
// timers and orphaned handlers claimed with FOR UPDATE SKIP LOCKED.
package postgres
