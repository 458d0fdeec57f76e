package cli_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestServeTracesToOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, "wfd serve"
// sends its spans over OTLP/HTTP, as service "wfd": here to a collector
// stand-in on loopback that keeps what it receives.
func TestServeTracesToOTLP(t *testing.T) {
	var (
		mu    sync.Mutex
		names []string
		svc   []string
	)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || err != nil || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range req.GetResourceSpans() {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					svc = append(svc, a.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					names = append(names, s.GetName())
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(nil)
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // ms: export soon, not in 5 s
	addr := serve(t)
	ok(t, "run", "echo", "--follow", "--addr", addr)
	eventually(t, "the collector receives the RunWorkflow span of service wfd", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(names, "wfd.v1.WorkflowService/RunWorkflow") && slices.Contains(names, "wfd.step echo") &&
			slices.Contains(svc, "wfd")
	})
}
