// Package rpc serves wfd.v1.WorkflowService: the RPCs, their request
// checks, the conversions to the API's messages, StreamEvents with its
// memory budget, waits for handlers, human tasks and published events.
//
// It reaches handlers through the runtime (live) and the store, and what
// it needs of the step workers and replica mode through ports it defines
// (Workers, Replica). It must not import its sibling rooms (workers,
// replica).
package rpc
