// Package bench is the logic of `wfd bench`: a load generator that drives a
// real wfd server over loopback from a separate process and reports
// latency, throughput and the server's memory.
//
// By default it starts the server itself (this executable, or --wfd, with
// `serve --addr 127.0.0.1:<free port> --data <temp dir>`), waits for the
// gRPC health check, runs the phases and stops the server with SIGTERM
// (SIGKILL after a grace period). With --addr it targets a running server
// instead; its memory is then reported only when --server-pid names it.
//
// The phases, all over one set of HTTP/2 connections:
//
//   - echo: sequential runs of the echo workflow; the latency of one is the
//     time from calling RunWorkflow to receiving its HandlerFinished record
//     on StreamEvents (or a RunWorkflow response that already says
//     completed).
//   - park: -n approval handlers started by -c concurrent clients; a
//     handler is parked when its client sees the IdleChanged{idle: true}
//     record (or a RunWorkflow response that already shows it idle).
//   - resume: for each parked handler, a client opens StreamEvents after
//     the idle record, sends {"approved": true} as an "approval" event, and
//     waits for HandlerFinished; the latency is SendEvent call to
//     HandlerFinished received.
//   - memory: the server's VmRSS (/proc/<pid>/status) before park, after
//     park (-n handlers parked in memory) and after resume.
//
// --worker go,ts,python (workerproc.go) runs the phases again with the
// workflows served by a worker process of each language, each on a new
// server: the worker (`wfd bench worker` for Go, examples/ts/bench-worker.mjs,
// examples/python/bench_worker.py) registers bench-echo and bench-approval,
// which behave as echo and approval, and the phases run those. The
// worker's CPU time and resident memory are reported beside the server's.
// The in-process phases run first, on their own server, unless
// --in-process=false, so one run gives both.
//
// --tls (tls.go) runs the in-process phases again on a new server with
// --tls-cert and --tls-key (a throwaway CA and certificate), the clients
// speaking TLS and sending a bearer token on every call (the server
// verifies it: --auth-tokens, role admin), and compares the
// parks per second.
//
// --mode release (release.go) measures instead what releasing idle
// handlers buys. It starts the server with --idle-timeout 0 (only the
// benchmark releases) and --debug-addr (to force a GC and read the live
// heap through net/http/pprof), takes 100 handlers through park, release
// and rehydrate (so that one-time costs are in the baseline, not divided
// among the n handlers), parks n approval handlers, releases them
// all with ReleaseHandler, reads the server's memory before park, after
// park and after the releases (right after, after --settle, and after a
// forced GC and --settle), stops the server and reads the bbolt file,
// restarts it on the same data and times process start → SERVING, and
// then answers released handlers at 1 client and at -c clients
// (SendEvent → HandlerFinished), with the server's rehydration counters.
//
// --store URL starts the server on that PostgreSQL database; --replicas N
// (replicas.go) starts N `serve --replica-id` processes on it instead, each
// with its own port and data directory, and spreads the clients' workers
// over them round-robin: a handler parked through one replica is mostly
// resumed through another, which forwards the SendEvent to its owner;
// --route owner sends each resume to the replica its handler's owner names
// instead (a handler-aware client or proxy: nothing is forwarded). CPU,
// memory and the GetStats counters are then summed over the replicas. When
// the database runs on this machine, the PostgreSQL server's CPU time (its
// postmaster and every process it started, those that exited included)
// is measured per phase too (pgcpu_linux.go).
//
// --compare-stores URL (compare.go) runs the phases on bbolt and on
// PostgreSQL with each --compare-replicas count (0: one server, not in
// replica mode), --rounds times, alternating within a round, each
// PostgreSQL run on a new database created through URL and dropped after
// it, and prints one table of every run.
//
// See docs/PERFORMANCE.md for what the numbers mean and results.
package bench
