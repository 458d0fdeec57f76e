// Package server serves wfd's API (wfd.v1.WorkflowService) over Connect,
// gRPC and gRPC-Web on one port, with gRPC health checking and server
// reflection.
//
// It is the composition root: Options, New (defaults, wiring, start),
// Serve and Close, the mux, and the HTTP edge every request passes
// (connection and body limits, malformed frames, Host and Origin checks,
// authentication, the drain, the probes, the console). Each concern
// beside it is a room under internal/ with a constructor of its own: live
// (the handler runtime), rpc (the API's handlers), observe (metrics,
// tracing, health), apierr (errors and their codes), workers (the step
// workers) and replica (replica mode). Rooms import live and the leaves (apierr, observe),
// never each other; TestRoomsImportNoSibling checks it.
package server
