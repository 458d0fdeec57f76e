// Package histcheck is a Jepsen-style history checker for wfd replicas.
//
// It runs real `wfd serve` replicas, built from this module, on a
// PostgreSQL cluster of its own (internal/pgtest), drives concurrent
// clients through all of them while a seeded nemesis SIGKILLs, restarts,
// SIGSTOPs and SIGCONTs replicas and crashes PostgreSQL, records every
// call and every GetHandler observation in a history, heals everything,
// reads every handler's records back and checks the history against them
// (design notes, "Several replicas": what a replica acknowledged stays
// done, a terminal record is the last, takeover within TTL + 2 s).
//
// The files, by topic:
//
//   - harness.go, replica.go: the binary, the PostgreSQL cluster, the
//     replica processes (start, SIGKILL, SIGSTOP/SIGCONT, restart on the
//     same address) and a Connect client per replica.
//   - history.go: what was asked and what was seen (Op, Observation),
//     recorded concurrently.
//   - caller.go: one call through a live replica, retried through another
//     on Unavailable, DeadlineExceeded, Canceled or a transport error.
//   - workload.go: the concurrent clients (approval and expense handlers)
//     and the GetHandler sampler.
//   - nemesis.go, schedules.go: the faults, random from a seed, and the
//     named schedules (restart-during-takeover, timers, paused-owner).
//   - takeover.go: time from a kill or pause to the first call served
//     elsewhere for a handler the victim owned, and its bound.
//   - read.go: the final reads (GetHandler and every record of a handler).
//   - check.go, checkutil.go: the checker, a pure function of the
//     history and the final reads, reporting violations by kind.
//   - run.go, summary.go: one run from start to report.
//
// The tests in this package are the entry points: TestHistory (a random
// seed and a short duration in CI; -history.seed and -history.duration
// replay or lengthen it) and one test per named schedule:
//
//	go test ./internal/histcheck -run 'TestHistory$' -v
//	go test ./internal/histcheck -run 'TestHistory$' -v -timeout 0 -args \
//	    -history.seed=N -history.duration=30m -history.ttl=2s -history.out=DIR
//	go test ./internal/histcheck -run 'TestRestartDuringTakeover|TestTimersFireOnce|TestPausedOwnerTakeover' -v
//
// WFD_HISTORY_SEED, WFD_HISTORY_DURATION (and _TTL, _REPLICAS, _CLIENTS,
// _OUT, _STRICT) set the same from a script. A pause during which the
// victim's handlers were not served elsewhere at all always fails a run;
// the takeover bound (p99 within TTL + 2 s) fails a run given a duration
// (or -history.strict) and is only reported by the CI run and the
// scenario tests, which share a machine that may be crowded. A run writes history.json,
// finals.json, report.json, nemesis.json, summary.txt and each replica's
// log to -history.out/<test> (default: the test's artifact directory,
// kept with go test -artifacts). They skip in -short mode and without
// PostgreSQL binaries (failing instead with WFD_PGTEST_REQUIRE set).
package histcheck
