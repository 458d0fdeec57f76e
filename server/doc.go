// Package server serves wfd's API (wfd.v1.WorkflowService) over Connect,
// gRPC and gRPC-Web on one port, with gRPC health checking and server
// reflection. It joins the engine to a persistence.Store: a journal commits
// every handler change (records and checkpoint together) in shared commits,
// a hub fans committed records out to streams, and start-up resumes the
// handlers that were running.
package server
