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
