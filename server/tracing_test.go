package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"connectrpc.com/connect"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"
	"github.com/wfd-dev/wfd/gen/wfd/v1/wfdv1connect"
	"github.com/wfd-dev/wfd/internal/testwait"

	"github.com/wfd-dev/wfd/server"
)

// callerTrace is the trace a client sends in its traceparent header.
const (
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerParent = "00f067aa0ba902b7"
)

// TestTraceSendEventToCommit: an event for a released handler, sent with
// a traceparent, makes one trace, the caller's: the SendEvent span, and
// under it the handler's rehydration, the step run the event starts and
// the store commit that makes the event durable.
func TestTraceSendEventToCommit(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	addr := serveWith(t, server.Options{Workflows: testWorkflows(), TracerProvider: tp})
	hc := h2cClient()
	t.Cleanup(hc.CloseIdleConnections)
	c := wfdv1connect.NewWorkflowServiceClient(hc, "http://"+addr)
	ctx := ctxT(t)
	if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: "counter", HandlerId: "traced", Input: st(t, map[string]any{"want": 1})}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, c, "traced")
	release(t, c, "traced")
	spans.Reset()

	traced := wfdv1connect.NewWorkflowServiceClient(hc, "http://"+addr, connect.WithInterceptors(connect.UnaryInterceptorFunc(
		func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
				req.Header().Set("traceparent", "00-"+callerTrace+"-"+callerParent+"-01")
				return next(ctx, req)
			}
		})))
	if _, err := traced.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: "traced", Event: &wfdv1.Event{Type: "inc", Data: st(t, map[string]any{"n": 1})}}); err != nil {
		t.Fatal(err)
	}
	collect(t, c, "traced", 0) // the handler has completed: its spans have ended
	check := connect.NewClient[healthpb.HealthCheckRequest, healthpb.HealthCheckResponse](hc, "http://"+addr+"/grpc.health.v1.Health/Check", connect.WithGRPC())
	if _, err := check.CallUnary(ctx, connect.NewRequest(&healthpb.HealthCheckRequest{})); err != nil {
		t.Fatal(err)
	}

	find := func(got tracetest.SpanStubs, name string, parent trace.SpanID) (tracetest.SpanStub, bool) {
		for _, s := range got {
			if s.Name == name && s.Parent.SpanID() == parent && s.SpanContext.TraceID().String() == callerTrace {
				return s, true
			}
		}
		return tracetest.SpanStub{}, false
	}
	testwait.Until(t, func() error {
		got := spans.GetSpans()
		var names []string
		for _, s := range got {
			names = append(names, fmt.Sprintf("%s (trace %s, parent %s)", s.Name, s.SpanContext.TraceID(), s.Parent.SpanID()))
		}
		parent, _ := trace.SpanIDFromHex(callerParent)
		rpc, ok := find(got, "wfd.v1.WorkflowService/SendEvent", parent)
		if !ok {
			return fmt.Errorf("no SendEvent span in the caller's trace under its span: %v", names)
		}
		for _, name := range []string{"wfd.rehydrate", "wfd.step count", "wfd.store.commit"} {
			if _, ok := find(got, name, rpc.SpanContext.SpanID()); !ok {
				return fmt.Errorf("no %s span under the SendEvent span: %v", name, names)
			}
		}
		return nil
	})
	for _, s := range spans.GetSpans() {
		if strings.Contains(s.Name, "grpc.health") {
			t.Errorf("a health check has a span: %s", s.Name)
		}
	}
}

// TestTraceIDsInLogs: a line logged with a traced context carries its
// trace and span ids; one without does not.
func TestTraceIDsInLogs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(server.TraceLogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("test").Start(context.Background(), "call")
	log.InfoContext(ctx, "traced")
	span.End()
	log.Info("untraced")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log: %q", buf.String())
	}
	var traced, untraced map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &traced); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &untraced); err != nil {
		t.Fatal(err)
	}
	if traced["trace_id"] != span.SpanContext().TraceID().String() || traced["span_id"] != span.SpanContext().SpanID().String() || traced["component"] != "test" {
		t.Errorf("traced line: %v", traced)
	}
	if _, ok := untraced["trace_id"]; ok {
		t.Errorf("untraced line has a trace id: %v", untraced)
	}
}
