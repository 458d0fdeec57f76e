// Package apierr holds the errors every part of the server returns and the
// one place they become Connect codes.
//
// Handlers, the runtime and the interceptors wrap the sentinels here (or
// return the engine's and the store's own); Edge, the interceptor every
// service runs inside, maps them with ToConnect. Owned is the contract
// between a replica that refuses a call for a handler live elsewhere and
// the forwarder that sends the call there. Internal keeps details (paths,
// library messages) out of what clients see.
//
// apierr imports the engine and the store for their sentinel errors, and
// nothing else of wfd's.
package apierr
