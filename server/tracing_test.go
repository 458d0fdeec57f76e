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
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/structpb"

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

// TestTraceCallToCommit: a call that wakes a released handler, sent with a
// traceparent, makes one trace, the caller's: the call's span, and under
// it the handler's rehydration, the step run it starts and the store
// commit. For an event (SendEvent), a task's answer (CompleteTask) and a
// published key (PublishEvent).
func TestTraceCallToCommit(t *testing.T) {
	for _, tc := range []struct {
		name, workflow, step string
		input                map[string]any
		call                 func(context.Context, wfdv1connect.WorkflowServiceClient, string) error
	}{
		{"SendEvent", "counter", "count", map[string]any{"want": 1}, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, id string) error {
			_, err := c.SendEvent(ctx, &wfdv1.SendEventRequest{HandlerId: id, Event: &wfdv1.Event{Type: "inc", Data: stAny(map[string]any{"n": 1})}})
			return err
		}},
		{"CompleteTask", "expense", "review", map[string]any{}, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, id string) error {
			tasks, err := c.ListTasks(ctx, &wfdv1.ListTasksRequest{HandlerId: id})
			if err != nil || len(tasks.GetTasks()) != 1 {
				return fmt.Errorf("tasks %v, %v: want one", tasks, err)
			}
			_, err = c.CompleteTask(ctx, &wfdv1.CompleteTaskRequest{TaskId: tasks.GetTasks()[0].GetTaskId(), Answer: stAny(map[string]any{"approved": true})})
			return err
		}},
		{"PublishEvent", "order", "await_payment", map[string]any{"order_id": "o-1"}, func(ctx context.Context, c wfdv1connect.WorkflowServiceClient, _ string) error {
			_, err := c.PublishEvent(ctx, &wfdv1.PublishEventRequest{Key: "payment:o-1", Data: stAny(map[string]any{"paid": true})})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			addr := serveWith(t, server.Options{Workflows: testWorkflows(), TracerProvider: tp})
			hc := h2cClient()
			t.Cleanup(hc.CloseIdleConnections)
			c := wfdv1connect.NewWorkflowServiceClient(hc, "http://"+addr)
			ctx := ctxT(t)
			if _, err := c.RunWorkflow(ctx, &wfdv1.RunWorkflowRequest{Workflow: tc.workflow, HandlerId: "traced", Input: st(t, tc.input)}); err != nil {
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
			if err := tc.call(ctx, traced, "traced"); err != nil {
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
				rpc, ok := find(got, "wfd.v1.WorkflowService/"+tc.name, parent)
				if !ok {
					return fmt.Errorf("no %s span in the caller's trace under its span: %v", tc.name, names)
				}
				for _, name := range []string{"wfd.rehydrate", "wfd.step " + tc.step, "wfd.store.commit"} {
					if _, ok := find(got, name, rpc.SpanContext.SpanID()); !ok {
						return fmt.Errorf("no %s span under the %s span: %v", name, tc.name, names)
					}
				}
				return nil
			})
			for _, s := range spans.GetSpans() {
				if strings.Contains(s.Name, "grpc.health") {
					t.Errorf("a health check has a span: %s", s.Name)
				}
			}
		})
	}
}

// stAny is st for a table's literal (no *testing.T at hand).
func stAny(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return s
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

// TestTraceParkedStepNotAnError: a step run that parks waiting for an
// event ended as it meant to: its span is not an error (it says
// wfd.waiting), so trace backends do not count every human task as a
// failure; a step that fails still is one.
func TestTraceParkedStepNotAnError(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	addr := serveWith(t, server.Options{Workflows: testWorkflows(), TracerProvider: tp})
	hc := h2cClient()
	t.Cleanup(hc.CloseIdleConnections)
	c := wfdv1connect.NewWorkflowServiceClient(hc, "http://"+addr)
	if _, err := c.RunWorkflow(ctxT(t), &wfdv1.RunWorkflowRequest{Workflow: "expense", HandlerId: "parked", Input: st(t, map[string]any{})}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, c, "parked")
	var step tracetest.SpanStub
	testwait.For(t, "the parked step's span", func() bool {
		for _, s := range spans.GetSpans() {
			if s.Name == "wfd.step review" {
				step = s
				return true
			}
		}
		return false
	})
	if step.Status.Code == codes.Error {
		t.Fatalf("the parked step's span is an error: %q", step.Status.Description)
	}
	waiting := false
	for _, a := range step.Attributes {
		waiting = waiting || a.Key == "wfd.waiting" && a.Value.AsBool()
	}
	if !waiting {
		t.Fatalf("the parked step's span does not say wfd.waiting: %v", step.Attributes)
	}
}
