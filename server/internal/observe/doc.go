// Package observe holds what the server tells about itself: counters and
// histograms (Stats, Histograms, Snapshot), the Prometheus registry served
// at /metrics (Metrics), tracing (Tracing: spans for calls, rehydrations,
// step runs and commits, and the slog handler that adds trace ids), recent
// latencies and log throttling.
//
// It imports the engine and the store for their types only, and no other
// package of the server: the server reads its parts into a Snapshot.
package observe
