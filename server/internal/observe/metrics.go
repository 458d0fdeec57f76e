package observe

import (
	"context"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wfd-dev/wfd/persistence"
)

// scrapeTimeout bounds the store read behind a scrape (the handler counts).
const scrapeTimeout = 2 * time.Second

// Histogram buckets, in seconds. RPCs range from a memory read to a long
// stream; a commit is one fsync or a few; rehydration and dispatch are
// a store read and a round trip to a worker.
var (
	rpcBuckets      = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	storeBuckets    = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	changesBuckets  = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
	rehydrateBucket = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
)

// Histograms are the distributions the server observes as things happen
// (the counters are read at scrape time from stats, GetStats's source).
// They are built in New before anything can observe them.
type Histograms struct {
	Rehydrate prometheus.Histogram
	Commit    prometheus.Histogram
	Sync      prometheus.Histogram
	Changes   prometheus.Histogram
	Dispatch  prometheus.Histogram
}

// NewHistograms builds the histograms, not yet registered.
func NewHistograms() Histograms {
	h := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	}
	return Histograms{
		Rehydrate: h("wfd_rehydrate_duration_seconds", "Time to load a released handler back into memory (read, decode, restore).", rehydrateBucket),
		Commit: h("wfd_store_commit_duration_seconds",
			"Time of one store commit of handler changes, as the journal sees it (includes the fsync).", storeBuckets),
		Sync: h("wfd_store_sync_duration_seconds",
			"Time the store spent writing and fsyncing a commit's pages (bbolt's write time); absent for stores that cannot tell.", storeBuckets),
		Changes:  h("wfd_store_changes_per_commit", "Handler changes carried by one store commit.", changesBuckets),
		Dispatch: h("wfd_dispatch_duration_seconds", "Time from sending a step run to a worker to the worker's first call for it.", rpcBuckets),
	}
}

// Metrics is the server's Prometheus registry: its own, not the global
// one, so that several servers in one process (tests, embedders) each
// have theirs.
type Metrics struct {
	reg      *prometheus.Registry
	rpcs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics builds the registry: the Go and process collectors, the RPC
// counters (fed by Interceptor), the histograms hist, and what snapshot
// reads at scrape time.
func NewMetrics(hist Histograms, snapshot func(context.Context) (Snapshot, error)) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		rpcs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wfd_rpc_requests_total", Help: "RPCs served, by service, method and status code (counted when they end).",
		}, []string{"service", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "wfd_rpc_duration_seconds", Help: "RPC latency, from the call's start to its end (streams: their whole life; calls that wait: the wait included).", Buckets: rpcBuckets,
		}, []string{"service", "method"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.rpcs, m.duration,
		hist.Rehydrate, hist.Commit, hist.Sync, hist.Changes, hist.Dispatch,
		statsCollector{snapshot},
	)
	return m
}

// Handler serves the registry in the Prometheus text (or protobuf) format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// observe counts one RPC that ended with err after d.
func (m *Metrics) observe(procedure string, err error, d time.Duration) {
	service, method := splitProcedure(procedure)
	code := "ok"
	if err != nil {
		code = connect.CodeOf(err).String()
	}
	m.rpcs.WithLabelValues(service, method, code).Inc()
	m.duration.WithLabelValues(service, method).Observe(d.Seconds())
}

// splitProcedure splits "/wfd.v1.WorkflowService/RunWorkflow".
func splitProcedure(p string) (service, method string) {
	p = strings.TrimPrefix(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}

// rpcMetrics is the outermost interceptor: it sees every call's final
// code, refusals by later interceptors included.
type rpcMetrics struct{ m *Metrics }

var _ connect.Interceptor = rpcMetrics{}

// Interceptor counts every call by its final code: it goes outermost.
func (m *Metrics) Interceptor() connect.Interceptor { return rpcMetrics{m} }

func (r rpcMetrics) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		start := time.Now()
		res, err := next(ctx, req)
		r.m.observe(req.Spec().Procedure, err, time.Since(start))
		return res, err
	}
}

func (r rpcMetrics) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (r rpcMetrics) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		start := time.Now()
		err := next(ctx, conn)
		r.m.observe(conn.Spec().Procedure, err, time.Since(start))
		return err
	}
}

// statsCollector reads the server's counters and gauges at scrape time
// from the same snapshot GetStats answers with.
type statsCollector struct {
	snapshot func(context.Context) (Snapshot, error)
}

var (
	descReleases     = prometheus.NewDesc("wfd_releases_total", "Handlers released from memory to the store (any trigger).", nil, nil)
	descRehydrations = prometheus.NewDesc("wfd_rehydrations_total", "Handlers loaded back into memory from the store.", nil, nil)
	descReclaims     = prometheus.NewDesc("wfd_memory_reclaims_total", "Times memory freed by releases was given back to the OS.", nil, nil)
	descDeleted      = prometheus.NewDesc("wfd_handlers_deleted_total", "Finished handlers deleted, by reason (request: DeleteHandler; retention: the retention sweep).", []string{"reason"}, nil)
	descCommits      = prometheus.NewDesc("wfd_store_commits_total", "Store commits of handler changes (attempted; failed ones also count in wfd_store_commit_errors_total).", nil, nil)
	descCommitErrs   = prometheus.NewDesc("wfd_store_commit_errors_total", "Store commits of handler changes that failed.", nil, nil)
	descChanges      = prometheus.NewDesc("wfd_store_changes_total", "Handler changes carried by store commits.", nil, nil)
	descStoreSize    = prometheus.NewDesc("wfd_store_size_bytes", "Size of the store's file.", nil, nil)
	descInMemory     = prometheus.NewDesc("wfd_handlers_in_memory", "Running handlers in memory, by state (busy or idle).", []string{"state"}, nil)
	descByStatus     = prometheus.NewDesc("wfd_handlers", "Stored handlers by status.", []string{"status"}, nil)
	descByResidency  = prometheus.NewDesc("wfd_handlers_residency", "Running handlers by residency (active: live in a server's memory; released: only in the store); finished handlers are in neither.", []string{"residency"}, nil)
	descTasksPending = prometheus.NewDesc("wfd_tasks_pending", "Human tasks waiting for an answer.", nil, nil)
	descStreams      = prometheus.NewDesc("wfd_streams_open", "Open StreamEvents subscriptions and waits for handlers to finish.", nil, nil)
	descWorkers      = prometheus.NewDesc("wfd_workers_connected", "Step workers connected (WorkerService.Connect streams).", nil, nil)
	descStreamBytes  = prometheus.NewDesc("wfd_stream_sending_bytes", "Bytes of records StreamEvents streams are sending and their clients have not taken yet (bounded by the stream memory limit).", nil, nil)
	descStreamsEnded = prometheus.NewDesc("wfd_streams_ended_behind_total", "StreamEvents streams ended (ResourceExhausted, resumable) because their record could not be sent in time.", nil, nil)
	descDispatches   = prometheus.NewDesc("wfd_dispatches_total", "Step runs dispatched to workers.", nil, nil)
	descRedispatches = prometheus.NewDesc("wfd_redispatches_total", "Step runs dispatched again because their worker was lost.", nil, nil)
	descSlots        = prometheus.NewDesc("wfd_concurrency_starts_total", "Starts of handlers of workflows with a concurrency limit, by outcome (queued: waited in a key's queue; admitted: a queued one got its slot; refused: the limit refused it).", []string{"outcome"}, nil)
	descQueued       = prometheus.NewDesc("wfd_concurrency_queued", "Handlers waiting in a concurrency key's queue, by workflow.", []string{"workflow"}, nil)
	descSchedule     = prometheus.NewDesc("wfd_schedule_outcomes_total", "Outcomes of schedule ticks this server recorded, by kind (started, skipped, missed, failed, buffered, cancelled_previous).", []string{"kind"}, nil)
)

func (c statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descReleases, descRehydrations, descReclaims, descDeleted, descCommits, descCommitErrs, descChanges,
		descStoreSize, descInMemory, descByStatus, descByResidency, descTasksPending, descStreams, descWorkers, descDispatches, descRedispatches,
		descStreamBytes, descStreamsEnded, descSchedule, descSlots, descQueued} {
		ch <- d
	}
}

func (c statsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	snap, err := c.snapshot(ctx)
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	counter(descReleases, snap.Releases)
	counter(descRehydrations, snap.Rehydrations)
	counter(descReclaims, snap.Reclaims)
	counter(descDeleted, snap.DeletedRequest, DeletedByRequest)
	counter(descDeleted, snap.DeletedRetention, DeletedByRetention)
	counter(descCommits, snap.Commits)
	counter(descCommitErrs, snap.CommitErrors)
	counter(descChanges, snap.Changes)
	counter(descDispatches, snap.Dispatches)
	counter(descRedispatches, snap.Redispatches)
	gauge(descInMemory, snap.InMemory-snap.IdleInMemory, "busy")
	gauge(descInMemory, snap.IdleInMemory, "idle")
	gauge(descStreams, snap.Streams)
	gauge(descWorkers, snap.Workers)
	gauge(descStreamBytes, snap.StreamBytes)
	counter(descStreamsEnded, snap.StreamsEnded)
	counter(descSlots, snap.SlotsQueued, "queued")
	counter(descSlots, snap.SlotsAdmitted, "admitted")
	counter(descSlots, snap.SlotsRefused, "refused")
	for _, k := range scheduleKinds {
		counter(descSchedule, snap.ScheduleOutcomes[k], k)
	}
	if snap.StoreSize >= 0 {
		gauge(descStoreSize, snap.StoreSize)
	}
	// The store's counts are left out of a scrape when it cannot be read
	// (wfd_store_commit_errors_total and /readyz tell why).
	if err != nil {
		return
	}
	for st, n := range snap.Counts.ByStatus {
		gauge(descByStatus, n, st.String())
	}
	// A finished handler keeps the residency it finished with (active) in
	// the store, and only running handlers are released: the running
	// ones not released are the live ones.
	released := snap.Counts.ByResidency[persistence.ResidencyReleased]
	gauge(descByResidency, released, persistence.ResidencyReleased.String())
	gauge(descByResidency, max(snap.Counts.ByStatus[persistence.StatusRunning]-released, 0), persistence.ResidencyActive.String())
	gauge(descTasksPending, snap.TasksPending)
	for wf, n := range snap.Queued {
		gauge(descQueued, n, wf)
	}
}

// syncObserver is implemented by stores that can time the disk part of a
// commit (persistence/bolt: writing and fsyncing its pages).
type syncObserver interface {
	ObserveSync(func(time.Duration))
}

// ObserveStoreSync feeds wfd_store_sync_duration_seconds (h.Sync) from the
// store, if it can tell.
func ObserveStoreSync(store any, h Histograms) {
	if o, ok := store.(syncObserver); ok {
		o.ObserveSync(func(d time.Duration) { h.Sync.Observe(d.Seconds()) })
	}
}
