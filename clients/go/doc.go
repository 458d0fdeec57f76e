// Package client is the Go client of wfd's WorkflowService: start handlers,
// follow their streams, send them events, list, cancel and release them;
// list and answer human tasks; publish keyed events; read server stats.
//
//	c, err := client.Dial("127.0.0.1:7233")
//	if err != nil { ... }
//	defer c.Close()
//	h, err := c.Run(ctx, "approval", map[string]any{"amount": 42})
//	for rec, err := range c.Stream(ctx, h.GetHandlerId(), 0) {
//		if err != nil { ... }
//		fmt.Println(rec.GetSeq())
//	}
//
// Stream yields the events steps write and the terminal record;
// [StreamInternal] adds step state, idle, release and restore records, and
// [StreamFromHead] starts at the head. To get a result in one call, [WithWait]
// on Run, [WithSendWait] on Send, or [Client.Wait]; [Client.Identity] says
// who the server takes the caller for.
//
// # Why grpc-go
//
// The server speaks Connect, gRPC and gRPC-Web on one port, so a Go client
// could use connect-go or grpc-go. This package uses grpc-go, the reference
// gRPC implementation, because the behaviour a long-lived client needs
// comes with it: connection management (reconnect with backoff, keepalive
// pings that notice a dead peer under a quiet stream, name resolution) and
// the interceptors of github.com/grpc-ecosystem/go-grpc-middleware/v2, whose
// retry and timeout interceptors are grpc-go types and do not attach to
// connect-go. What it gives up, the Connect protocol's HTTP/1.1 and JSON, a
// Go program does not need; browsers and curl still have them.
//
// # Timeouts and retries
//
// Unary calls get a default timeout (10 s, see [WithTimeout]) when their
// context has no deadline; a deadline of the caller's own is left alone. The
// timeout bounds the call with all its retries. A unary call that fails with
// codes.Unavailable (no connection, a dropped connection, a server shutting
// down or a store that is unavailable) is tried again with exponential
// backoff and jitter (see [WithRetry]). No other code is retried.
//
// Retrying is safe for every call. [Client.Run] sends a handler id (a new
// UUIDv7 unless [WithHandlerID] gives one) so that a repeated RunWorkflow
// returns the handler the first one started; [Client.Get], [Client.List],
// [Client.Workflows], [Client.Task], [Client.Tasks], [Client.Stats] and
// [Client.PublishedEvents] read; the repeat of a [Client.Delete] that got
// through is codes.NotFound; a repeated Cancel or Release leaves the handler as the first one
// left it (the repeat may report codes.FailedPrecondition). [Client.Send]
// gives every event an idempotency key (a UUIDv7, or
// [WithIdempotencyKey]), so a retry after a dropped answer is acknowledged
// without delivering the event twice; the server remembers a handler's
// latest 1,024 keys. [Client.Publish] gives every event an id (a UUIDv7,
// or [WithEventID]), so a retry appends nothing and returns the first
// publication. The server takes one answer per task, so the repeat of a
// CompleteTask that got through is codes.FailedPrecondition on the wire;
// [Client.CompleteTask] then reads the task and reports success if it was
// completed by the same person with an equal answer.
//
// Streams are not retried by the middleware (its stream retry would replay
// from the first request); [Client.Stream] resumes them itself after the
// last sequence number it yielded.
//
// # Errors
//
// An error returned by a call is the gRPC status error the call ended with,
// unwrapped: status.Code(err) is the server's code (codes.NotFound for an
// unknown handler, workflow or task, codes.InvalidArgument for a bad
// request, an event type the handler does not accept or a task answer that
// fails the task's schema (the message names the failing fields),
// codes.FailedPrecondition for an event to a finished handler, a release
// of a busy one or an answer to a task that is no longer pending,
// codes.AlreadyExists for a handler id used by another workflow), and
// status.FromError(err) gives the message and details such as
// errdetails.RetryInfo. Input the client rejects before calling (a map that
// is not valid as a protobuf Struct) is codes.InvalidArgument too.
package client
