package apierr

import (
	"context"
	"errors"
	"log/slog"

	"connectrpc.com/connect"
)

// Edge is the interceptor that maps the error a call ends with to its
// Connect code (ToConnect), and logs the detail of every internal error
// under the error id the client got. The interceptors outside it (metrics,
// tracing) see the code.
type Edge struct{ Log *slog.Logger }

// Report logs err's detail if it is an Internal error not logged yet.
func (l Edge) Report(ctx context.Context, procedure string, err error) {
	var ie *Internal
	if errors.As(err, &ie) && !ie.logged {
		// With ctx, the line carries the call's trace id (TraceLogHandler).
		l.Log.ErrorContext(ctx, "call failed", "procedure", procedure, "code", connect.CodeOf(err).String(), "error_id", ie.id, "err", ie.detail)
	}
}

// WrapUnary implements connect.Interceptor.
func (l Edge) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		res, err := next(ctx, req)
		if err = ToConnect(err); err != nil {
			l.Report(ctx, req.Spec().Procedure, err)
		}
		return res, err
	}
}

// WrapStreamingClient implements connect.Interceptor.
func (l Edge) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler implements connect.Interceptor.
func (l Edge) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		err := ToConnect(next(ctx, conn))
		if err != nil {
			l.Report(ctx, conn.Spec().Procedure, err)
		}
		return err
	}
}
