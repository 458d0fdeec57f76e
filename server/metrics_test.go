package server_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/clients/go/worker"
)

// scrape reads and parses addr's /metrics.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", res.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// matches reports whether m's labels include labels ("k=v" pairs).
func matches(m *dto.Metric, labels []string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for _, kv := range labels {
		if k, v, _ := strings.Cut(kv, "="); have[k] != v {
			return false
		}
	}
	return true
}

// sample finds the sample of family name whose labels include labels;
// ok is false if there is none.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) (*dto.Metric, bool) {
	for _, m := range fams[name].GetMetric() {
		if matches(m, labels) {
			return m, true
		}
	}
	return nil, false
}

// value is the value of a counter or gauge sample, or the sample count of
// a histogram; 0 when the sample is absent.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	m, ok := sample(fams, name, labels...)
	switch {
	case !ok:
		return 0
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

// sum adds the values of every sample of counter name whose labels
// include labels.
func sum(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	total := 0.0
	for _, m := range fams[name].GetMetric() {
		if matches(m, labels) {
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

const workflowService = "service=wfd.v1.WorkflowService"

// TestMetricsCountCallsAndHandlers drives a server through calls that
// succeed and fail, a release and a rehydration, then checks that /metrics
// counts them by method and code, that its counters are GetStats's, and
// that its handler gauges match the store.
func TestMetricsCountCallsAndHandlers(t *testing.T) {
	ts := startServer(t, serverConfig{workflows: testWorkflows()})
	c := ts.client()
	ctx := ctxT(t)
	before := scrape(t, ts.addr)
	for _, name := range []string{"go_goroutines", "process_start_time_seconds", "wfd_store_size_bytes", "wfd_handlers"} {
		if _, ok := before[name]; !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}

	// "done" completes after two events, with a release and a rehydration
	// between them; "parked" stays released; "asks" waits for a human task.
	if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "expense", HandlerId: "asks", Input: st(t, map[string]any{"approver": "ada"})}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, c, "asks")
	for _, id := range []string{"done", "parked"} {
		if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: id, Input: st(t, map[string]any{"want": 2})}); err != nil {
			t.Fatal(err)
		}
		waitIdle(t, c, id)
	}
	inc := func(id string, n int) {
		t.Helper()
		if _, err := c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "inc", Data: st(t, map[string]any{"n": n})}}); err != nil {
			t.Fatal(err)
		}
	}
	inc("done", 1)
	waitIdle(t, c, "done")
	release(t, c, "done")
	release(t, c, "parked")
	inc("done", 2) // rehydrates "done"
	if got := got(collect(t, c, "done", 0)); len(got) != 2 {
		t.Fatalf("done's stream has %v, want two events", got)
	}
	_, err := c.GetHandler(ctx, &wfdv1.GetHandlerRequest{HandlerId: "nobody"})
	if err == nil {
		t.Fatal("GetHandler of an unknown handler succeeded")
	}
	// A stream that stays open while /metrics is read.
	open, err := c.StreamEvents(ctx, &wfdv1.StreamEventsRequest{HandlerId: "parked", IncludeInternal: true})
	if err != nil {
		t.Fatal(err)
	}
	if !open.Receive() {
		t.Fatalf("StreamEvents: %v", open.Err())
	}

	stats := stats(t, c)
	fams := scrape(t, ts.addr)
	for _, tc := range []struct {
		method, code string
		want         float64
	}{
		{"RunWorkflow", "ok", 3},
		{"SendEvent", "ok", 2},
		{"ReleaseHandler", "ok", 2},
		{"GetHandler", "not_found", 1},
		{"StreamEvents", "ok", 1}, // the stream that ended; the open one counts when it ends
		{"GetStats", "ok", 1},
	} {
		if got := value(fams, "wfd_rpc_requests_total", workflowService, "method="+tc.method, "code="+tc.code); got != tc.want {
			t.Errorf("wfd_rpc_requests_total{method=%s,code=%s} = %v, want %v", tc.method, tc.code, got, tc.want)
		}
	}
	// Every call that ended has its latency, whatever its code (waitIdle
	// polls GetHandler too).
	for _, method := range []string{"RunWorkflow", "SendEvent", "GetHandler", "StreamEvents", "ReleaseHandler"} {
		calls := sum(fams, "wfd_rpc_requests_total", workflowService, "method="+method)
		if got := value(fams, "wfd_rpc_duration_seconds", workflowService, "method="+method); got != calls || calls == 0 {
			t.Errorf("wfd_rpc_duration_seconds{method=%s} has %v samples, for %v calls", method, got, calls)
		}
	}

	// The counters are GetStats's (the server is quiet: nothing commits
	// between the two reads).
	for name, want := range map[string]int64{
		"wfd_releases_total":      stats.ReleasesTotal,
		"wfd_rehydrations_total":  stats.RehydrationsTotal,
		"wfd_store_commits_total": stats.CommitsTotal,
		"wfd_store_changes_total": stats.ChangesTotal,
		"wfd_streams_open":        stats.Streams,
		"wfd_workers_connected":   stats.WorkersConnected,
		"wfd_dispatches_total":    stats.DispatchesTotal,
	} {
		if got := value(fams, name); got != float64(want) {
			t.Errorf("%s = %v, GetStats says %d", name, got, want)
		}
	}
	if stats.ReleasesTotal < 2 || stats.RehydrationsTotal < 1 || stats.Streams != 1 {
		t.Errorf("GetStats: %d releases, %d rehydrations, %d streams; want 2+, 1+, 1", stats.ReleasesTotal, stats.RehydrationsTotal, stats.Streams)
	}
	// The histograms saw every event the counters did.
	for hist, counter := range map[string]string{
		"wfd_rehydrate_duration_seconds":    "wfd_rehydrations_total",
		"wfd_store_commit_duration_seconds": "wfd_store_commits_total",
		"wfd_store_changes_per_commit":      "wfd_store_commits_total",
	} {
		if h, n := value(fams, hist), value(fams, counter); h != n || n == 0 {
			t.Errorf("%s has %v samples, %s = %v", hist, h, counter, n)
		}
	}
	if m, _ := sample(fams, "wfd_store_changes_per_commit"); m.GetHistogram().GetSampleSum() != value(fams, "wfd_store_changes_total") {
		t.Errorf("changes per commit sum to %v, wfd_store_changes_total = %v", m.GetHistogram().GetSampleSum(), value(fams, "wfd_store_changes_total"))
	}
	if got := value(fams, "wfd_store_sync_duration_seconds"); got < value(fams, "wfd_store_commits_total") {
		t.Errorf("wfd_store_sync_duration_seconds has %v samples, fewer than the commits", got)
	}
	if value(fams, "wfd_store_size_bytes") <= 0 {
		t.Error("wfd_store_size_bytes is not positive")
	}

	// Handler and task gauges: one completed, two running (one released),
	// nothing busy, one task pending.
	for _, tc := range []struct {
		name, label string
		want        float64
	}{
		{"wfd_handlers", "status=completed", float64(stats.HandlersByStatus["completed"])},
		{"wfd_handlers", "status=running", float64(stats.HandlersByStatus["running"])},
		{"wfd_handlers_residency", "residency=released", float64(stats.HandlersReleased)},
		// Running and live: "asks" (at 57e5085 the completed "done"
		// counted too, as its stored residency is still active).
		{"wfd_handlers_residency", "residency=active", float64(stats.HandlersByStatus["running"] - stats.HandlersReleased)},
		{"wfd_handlers_in_memory", "state=idle", float64(stats.HandlersIdleInMemory)},
		{"wfd_handlers_in_memory", "state=busy", float64(stats.HandlersActive - stats.HandlersIdleInMemory)},
	} {
		if got := value(fams, tc.name, tc.label); got != tc.want {
			t.Errorf("%s{%s} = %v, GetStats says %v", tc.name, tc.label, got, tc.want)
		}
	}
	if stats.HandlersByStatus["completed"] != 1 || stats.HandlersByStatus["running"] != 2 || stats.HandlersReleased != 1 {
		t.Errorf("GetStats: %v by status, %d released; want one completed, two running, one released", stats.HandlersByStatus, stats.HandlersReleased)
	}
	tasks, err := c.ListTasks(ctx, &wfdv1.ListTasksRequest{Statuses: []wfdv1.TaskStatus{wfdv1.TaskStatus_TASK_STATUS_PENDING}})
	if err != nil {
		t.Fatal(err)
	}
	if got := value(fams, "wfd_tasks_pending"); got != float64(len(tasks.GetTasks())) || got != 1 {
		t.Errorf("wfd_tasks_pending = %v, ListTasks lists %d pending; want 1", got, len(tasks.GetTasks()))
	}

	// The open stream counts once it ends.
	_ = open.Close()
	testwait.Until(t, func() error {
		fams := scrape(t, ts.addr)
		if n := value(fams, "wfd_streams_open"); n != 0 {
			return fmt.Errorf("wfd_streams_open = %v after the stream closed", n)
		}
		if n := value(fams, "wfd_rpc_requests_total", workflowService, "method=StreamEvents", "code=canceled"); n != 1 {
			return fmt.Errorf("no StreamEvents counted as canceled: %v", n)
		}
		return nil
	})
}

// TestMetricsCountDispatches: a step run by a Go worker counts as
// dispatches, with their latency, and the worker as connected.
func TestMetricsCountDispatches(t *testing.T) {
	ts := startServer(t, serverConfig{})
	c := ts.client()
	stop := startWorker(t, ts, "w1", worker.Workflow{Definition: approvalDef("approval-remote"), Run: map[string]worker.StepFunc{"decide": decide}})
	workersServing(t, ts, "approval-remote", 1)
	if n := value(scrape(t, ts.addr), "wfd_workers_connected"); n != 1 {
		t.Fatalf("wfd_workers_connected = %v, want 1", n)
	}
	res, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "approval-remote", Input: st(t, map[string]any{})})
	if err != nil {
		t.Fatal(err)
	}
	finishApproval(t, c, res.GetHandler().GetHandlerId())
	fams := scrape(t, ts.addr)
	// The parked run and the re-run: each dispatched once, each answered.
	if d, l := value(fams, "wfd_dispatches_total"), value(fams, "wfd_dispatch_duration_seconds"); d != 2 || l != 2 {
		t.Errorf("wfd_dispatches_total = %v, dispatch latency samples %v; want 2 and 2", d, l)
	}
	if n := value(fams, "wfd_redispatches_total"); n != 0 {
		t.Errorf("wfd_redispatches_total = %v, want 0", n)
	}
	if d := stats(t, c).DispatchesTotal; d != 2 {
		t.Errorf("GetStats dispatches_total = %d, want 2", d)
	}
	stop()
	testwait.Until(t, func() error {
		if n := value(scrape(t, ts.addr), "wfd_workers_connected"); n != 0 {
			return fmt.Errorf("wfd_workers_connected = %v after the worker stopped", n)
		}
		return nil
	})
}

// get returns the status and body of GET addr+path.
func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	res, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, strings.TrimSpace(string(b))
}
