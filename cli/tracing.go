package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// tracerFromEnv builds the OTLP tracer provider the standard OTEL_*
// variables describe, or returns nil (no tracing) when none asks for
// traces: tracing is on when OTEL_TRACES_EXPORTER is "otlp" or an OTLP
// endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and off when OTEL_SDK_DISABLED is
// "true" or OTEL_TRACES_EXPORTER is "none". OTEL_EXPORTER_OTLP_PROTOCOL (or
// its _TRACES_ form) picks "grpc" or "http/protobuf" (the default); the
// exporters read the endpoint, headers, TLS and timeout variables
// themselves, and the SDK reads OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME
// (default "wfd") and OTEL_RESOURCE_ATTRIBUTES. shutdown flushes the spans.
func tracerFromEnv(ctx context.Context, log *slog.Logger) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	exporter := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")))
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") + os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	switch {
	case strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true"), exporter == "none":
		return nil, nil, nil
	case exporter == "" && endpoint == "":
		return nil, nil, nil
	case exporter != "" && exporter != "otlp":
		return nil, nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: only otlp and none are supported", exporter)
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp *otlptrace.Exporter
	switch protocol {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	case "", "http/protobuf":
		protocol = "http/protobuf"
		exp, err = otlptracehttp.New(ctx)
	default:
		return nil, nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: want grpc or http/protobuf", protocol)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	// The service name defaults to wfd; OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES (resource.Environment) override it.
	res, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName("wfd")), resource.Environment())
	if err != nil {
		return nil, nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	log.Info("tracing to OTLP", "protocol", protocol)
	return p, p.Shutdown, nil
}
