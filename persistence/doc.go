// Package persistence defines how wfd keeps handlers durable: the domain
// types (handler metadata, waiters, stream records, timers), the Store
// interface the engine and server use, and the errors every backend returns.
//
// The package is backend-neutral, in the style of litestream: the types and
// the interface live here, each backend lives in its own subpackage
// (persistence/bolt is the embedded default), and persistence/storetest is the
// conformance suite every backend must pass.
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
// immutable events appended by Store.Publish, global or addressed to one
// handler, which a handler that starts waiting for a key later can still
// find (Store.FindPublished).
//
// Every mutation of handlers and tasks goes through Store.Write, which
// applies a set of Changes in one atomic, durable commit. The package does not import the engine: it
// stores snapshots and records as bytes, so the engine's state format can
// evolve without touching storage.
//
// Ownership: in a deployment with several replicas, Handler.Owner names the
// replica that holds a handler live, and Change.IfOwner makes a write
// conditional on it, so two replicas can never both believe they own (and
// checkpoint) the same handler.
package persistence
