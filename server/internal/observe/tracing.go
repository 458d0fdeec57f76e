package observe

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/otelconnect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	wfdv1 "github.com/wfd-dev/wfd/gen/wfd/v1"

	"github.com/wfd-dev/wfd/engine"
)

// tracerName names the spans wfd makes itself (otelconnect names the RPCs').
const tracerName = "github.com/wfd-dev/wfd/server"

// Tracing makes the spans of one server: otelconnect's span per RPC, and
// wfd's spans for rehydrations, step runs and store commits. A step run or
// a commit runs on the handler's or the journal's goroutine, not the
// call's, so the server keeps the spans of the calls in flight by handler
// id (every call that delivers to a handler: SendEvent, CompleteTask,
// PublishEvent for each handler it wakes, CancelHandler, RunWorkflow,
// ReleaseHandler): a step run of that handler becomes a child of the first
// such call's span, and a commit a child of the first call whose handler
// it carries, with links to all of them. So one trace shows SendEvent (or
// CompleteTask, or PublishEvent) → rehydrate → step run → commit. What no
// call waits for (due timers, a child's steps, releases) starts traces of
// its own.
type Tracing struct {
	tp     trace.TracerProvider
	tracer trace.Tracer
	On     bool

	mu     sync.Mutex
	causes map[string][]trace.SpanContext
}

func NewTracing(tp trace.TracerProvider) *Tracing {
	on := tp != nil
	if !on {
		tp = noop.NewTracerProvider()
	}
	return &Tracing{tp: tp, tracer: tp.Tracer(tracerName), On: on, causes: map[string][]trace.SpanContext{}}
}

// Interceptors are otelconnect's (a span per call, continuing the
// caller's trace from its traceparent header) and the one that records
// which handler a call is about; none when tracing is off.
func (t *Tracing) Interceptors() ([]connect.Interceptor, error) {
	if !t.On {
		return nil, nil
	}
	otel, err := otelconnect.NewInterceptor(otelconnect.WithTracerProvider(t.tp), otelconnect.WithoutMetrics(), otelconnect.WithTrustRemote(),
		otelconnect.WithPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
		// Load balancers' health checks would be most of the traces.
		otelconnect.WithFilter(func(_ context.Context, spec connect.Spec) bool {
			return !strings.HasPrefix(spec.Procedure, "/"+grpchealth.HealthV1ServiceName+"/")
		}))
	if err != nil {
		return nil, fmt.Errorf("server: tracing: %w", err)
	}
	return []connect.Interceptor{otel, causeTracker{t}}, nil
}

// During records ctx's span as a cause of what handler id does until the
// returned function is called.
func (t *Tracing) During(ctx context.Context, id string) func() {
	sc := trace.SpanContextFromContext(ctx)
	if !t.On || id == "" || !sc.IsValid() {
		return func() {}
	}
	t.mu.Lock()
	t.causes[id] = append(t.causes[id], sc)
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		cs := t.causes[id]
		for i, c := range cs {
			if c.Equal(sc) {
				cs = append(cs[:i:i], cs[i+1:]...)
				break
			}
		}
		if len(cs) == 0 {
			delete(t.causes, id)
		} else {
			t.causes[id] = cs
		}
	}
}

// CausesOf returns the spans of the calls in flight about the handlers.
func (t *Tracing) CausesOf(ids ...string) []trace.SpanContext {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []trace.SpanContext
	for _, id := range ids {
		out = append(out, t.causes[id]...)
	}
	return out
}

// under returns ctx with the first cause as its remote parent, and links
// to all the causes, for a span started on a goroutine of wfd's own.
func under(ctx context.Context, causes []trace.SpanContext) (context.Context, trace.SpanStartOption) {
	if len(causes) == 0 {
		return ctx, trace.WithLinks()
	}
	links := make([]trace.Link, len(causes))
	for i, c := range causes {
		links[i] = trace.Link{SpanContext: c}
	}
	return trace.ContextWithRemoteSpanContext(ctx, causes[0]), trace.WithLinks(links...)
}

// OnStepRun is engine.Options.OnStepRun: a span per step run.
func (t *Tracing) OnStepRun(ctx context.Context, run engine.StepRun) (context.Context, func(error)) {
	if !t.On {
		return ctx, func(error) {}
	}
	// The run's own context carries no span: its parent is the call's.
	pctx, links := under(context.Background(), t.CausesOf(run.HandlerID))
	_, span := t.tracer.Start(pctx, "wfd.step "+run.Step, links, trace.WithAttributes(
		attribute.String("wfd.handler_id", run.HandlerID), attribute.String("wfd.workflow", run.Workflow),
		attribute.String("wfd.step", run.Step), attribute.Int("wfd.attempt", run.Attempt)))
	return trace.ContextWithSpan(ctx, span), func(err error) {
		if errors.Is(err, engine.ErrWaiting) {
			// A step that parks waiting for an event did what it meant
			// to: no error in any trace backend's error rate.
			span.SetAttributes(attribute.Bool("wfd.waiting", true))
			err = nil
		}
		End(span, err)
	}
}

// Commit starts the span of a store commit of changes to the handlers
// ids (one each).
func (t *Tracing) Commit(ids []string) trace.Span {
	if !t.On {
		return trace.SpanFromContext(context.Background()) // a no-op span
	}
	pctx, links := under(context.Background(), t.CausesOf(ids...))
	_, span := t.tracer.Start(pctx, "wfd.store.commit", links, trace.WithAttributes(attribute.Int("wfd.changes", len(ids))))
	return span
}

// Rehydrate starts the span of loading a handler, under the call's.
func (t *Tracing) Rehydrate(ctx context.Context, id string) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, "wfd.rehydrate", trace.WithAttributes(attribute.String("wfd.handler_id", id)))
}

// End ends span with err's outcome.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// causeTracker records the handler a call names (its request's
// handler_id) for the duration of the call.
type causeTracker struct{ t *Tracing }

func (c causeTracker) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		// The calls that make a handler run or commit without going
		// through Server.withLive (which records its handler for every
		// call that delivers to one: SendEvent, CompleteTask,
		// PublishEvent, CancelHandler) or Server.run (RunWorkflow, where
		// a missing id is made).
		if r, ok := req.Any().(*wfdv1.ReleaseHandlerRequest); ok {
			defer c.t.During(ctx, r.GetHandlerId())()
		}
		return next(ctx, req)
	}
}

func (c causeTracker) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (c causeTracker) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// TraceLogHandler wraps h so that records logged with a context that
// holds a span carry its trace_id and span_id.
func TraceLogHandler(h slog.Handler) slog.Handler { return traceLog{h} }

type traceLog struct{ slog.Handler }

func (l traceLog) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return l.Handler.Handle(ctx, r)
}

func (l traceLog) WithAttrs(as []slog.Attr) slog.Handler { return traceLog{l.Handler.WithAttrs(as)} }
func (l traceLog) WithGroup(name string) slog.Handler    { return traceLog{l.Handler.WithGroup(name)} }

// Provider is the tracer provider (a no-op one when tracing is off).
func (t *Tracing) Provider() trace.TracerProvider { return t.tp }
