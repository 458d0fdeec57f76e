// Package replica holds replica mode (server.Replica): a server as one of
// several sharing a database. A Replica is its handler leases, which the
// runtime uses as its live.Ownership (taken one at a time or in batches);
// the owner of a handler held elsewhere; the interceptor that forwards a
// call refused for such a handler to its owner, in the caller's name, over
// HTTP/2 or TLS; the claims of orphaned handlers and of due timers; and
// the feed of the other replicas' commits. Config is its configuration.
//
// It is built before the runtime (New), which takes it as its ownership,
// and given the runtime when it joins (Replica.Join). A nil *Replica is a
// single process: what the server calls of it does nothing.
//
// It imports the runtime (internal/live), apierr, observe and server/auth,
// and must not import its sibling rooms (rpc, workers) nor package server.
package replica
