// Package persistence defines how wfd keeps handlers durable: the domain
// types (handler metadata, waiters, stream records, timers), the
// interfaces the engine and server use, and the errors every backend
// returns.
//
// The package is backend-neutral, in the style of litestream: the types and
// the interfaces live here, each backend lives in its own subpackage
// (persistence/bolt is the embedded default, persistence/postgres the
// PostgreSQL one), and persistence/storetest is the conformance suite every
// backend must pass. What the backends do alike (change pre-checks, page
// tokens, workflow-definition conditions, value decoding) lives once in
// persistence/internal; each backend keeps how it reads, locks and writes.
//
// # Interfaces
//
// A Store keeps five kinds of thing, each an interface of its own, so
// that code that needs one kind can ask for that one:
//
//   - Handlers: handlers' metadata, snapshots and streams, written by
//     Write (with their tasks), read one by one or listed, and the scans
//     of their indexes (due timers, waiter keys, idle and finished
//     handlers);
//   - Tasks: the human tasks, read and listed (written with their
//     handler);
//   - PublishedLog: the published-event log, appended and read;
//   - WorkflowDefs: workflow definitions, put, read, listed and deleted
//     under a condition on their hash;
//   - Schedules: workflow schedules, created, read, listed, updated under
//     a condition on their revision and deleted, and the scan of those
//     that are due.
//
// Store is their composite, with Count (handlers and tasks) and Close.
// The stores of several replicas on one database implement more, found
// by type assertion: Leaser (the replica registry and one lease per
// handler, with fencing tokens Change.Fence checks), which includes
// Claimer (work no replica holds, claimed by one), and WorkerRoutes
// (which replica has the step workers of which workflow). storetest.Run
// checks a Store; storetest.RunReplicas checks Leaser, Claimer and
// WorkerRoutes on stores that share their storage, and skips what a
// store does not implement.
//
// # What a Store holds
//
// A Store holds, per handler:
//
//   - metadata (Handler): what listing, filtering and waking need, small and
//     decoded on every read;
//   - a snapshot: the engine's serialised state, opaque bytes, replaced as a
//     whole on checkpoint and read only to rehydrate the handler;
//   - a stream of records: opaque bytes with per-handler, increasing sequence
//     numbers, appended and never rewritten, so a client can resume a stream
//     from the last number it saw;
//   - indexes derived from the metadata: by status, workflow, residency, idle
//     time, timer deadline and waiter wake key;
//   - its human tasks (Task): the inbox of questions waiting for a person,
//     upserted with the handler's changes, listed newest first by status,
//     assignee, workflow and handler, and deleted with the handler.
//
// Beside the handlers, a Store keeps the published-event log (Published):
// immutable events appended by PublishedLog.Publish, global or addressed
// to one handler, which a handler that starts waiting for a key later can
// still find (PublishedLog.FindPublished); and the workflow definitions
// (WorkflowDef) that workers registered, and the workflow schedules
// (Schedule), whose spec, policy and state the package schedule
// interprets: the store keeps them as plain values and opaque bytes.
//
// Every mutation of handlers and tasks goes through Handlers.Write, which
// applies a set of Changes in one atomic, durable commit. The package
// does not import the engine: it stores snapshots and records as bytes,
// so the engine's state format can evolve without touching storage.
//
// Ownership: in a deployment with several replicas, Handler.Owner names the
// replica that holds a handler live, and Change.IfOwner makes a write
// conditional on it, so two replicas can never both believe they own (and
// checkpoint) the same handler; Change.Fence makes it conditional on the
// handler's lease (Leaser) too.
package persistence
