// Package cli is wfd's command line: the server (serve) and client
// commands built on the Go client (workflows, run, get, handlers, send,
// stream, wait, cancel, release, delete; tasks, task, complete for human tasks;
// publish and events for keyed events; stats, whoami), and bench, which hands
// over to package bench.
// cmd/wfd only wires the process's arguments,
// signals and standard streams into [Main], so the whole command line is
// testable in-process.
//
// Flags may come before or after the arguments. Flags marked with an
// environment variable (WFD_ADDR, WFD_DATA, ...) take their default from
// it; a flag on the command line wins. Output is for people by default and
// protojson, one object per line, with --json. Errors go to stderr as
// "wfd: <code>: <message>", where code is the gRPC status code in the
// Connect spelling (not_found, invalid_argument, ...).
package cli
