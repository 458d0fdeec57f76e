// Package live is the handler runtime: what keeps wfd's handlers live.
//
// A Runtime holds the engine with its Journal (every handler change made
// durable in shared store commits, then fanned out to streams by the Hub),
// and everything that moves handlers between the store and memory: loads
// (one claim per handler, shared by concurrent callers), starts, release of
// idle handlers, timers of released handlers, lost handlers loaded again,
// children told of their ends, deletion and retention, and memory given
// back after releases. The API, the step workers and replica mode reach
// handlers only through it (Live, WithLive, Start, Meta, View, ...).
//
// live defines what it needs of the rooms beside it as ports (Ownership,
// Workers, Health) and must not import them: it imports the engine, the
// store, and the leaf packages apierr and observe, nothing else of the
// server's.
package live
