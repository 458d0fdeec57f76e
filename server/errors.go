package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/internal/errid"
	"github.com/wfd-dev/wfd/persistence"
)

// retryAfter is the hint given with Unavailable errors.
const retryAfter = time.Second

// toConnect maps an error from the engine, the store or the request checks
// to a Connect error with the right code. It is the only place that decides
// codes, and errorEdge, the interceptor every service runs inside, the
// only caller: handlers and the interceptors inside it return their
// errors as they are (wrapping the sentinels below).
//
// It is also where internals stop: an error the service did not expect
// (Internal), a store failure (Unavailable from the store, DataLoss) can
// carry file paths and library detail. The client gets a clear message and
// an error id instead; errorEdge logs the detail under that id.
func toConnect(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	code := connect.CodeInternal
	switch {
	case errors.Is(err, context.Canceled):
		code = connect.CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		code = connect.CodeDeadlineExceeded
	// A finished handler's error may also name its cause (an unknown
	// workflow, say): the handler's state decides the code.
	case errors.Is(err, engine.ErrHandlerDone), errors.Is(err, engine.ErrNotIdle), errors.Is(err, errFailedPrecondition),
		errors.Is(err, persistence.ErrFinished):
		code = connect.CodeFailedPrecondition
	case errors.Is(err, engine.ErrUnknownWorkflow), errors.Is(err, errNotFound), errors.Is(err, persistence.ErrNotFound):
		code = connect.CodeNotFound
	case errors.Is(err, errInvalid), errors.Is(err, engine.ErrInvalidEvent), errors.Is(err, persistence.ErrInvalid),
		errors.Is(err, engine.ErrInvalidPayload), errors.Is(err, engine.ErrInvalidInput):
		code = connect.CodeInvalidArgument
	case errors.Is(err, engine.ErrLimit), errors.Is(err, errResourceExhausted):
		code = connect.CodeResourceExhausted
	case errors.Is(err, engine.ErrHandlerExists), errors.Is(err, errAlreadyExists), errors.Is(err, persistence.ErrExists):
		code = connect.CodeAlreadyExists
	// A replica whose lease was taken over: the call belongs on the
	// handler's new owner, so a retry may succeed.
	// A change refused because the handler changed since it was read
	// (another replica, or a concurrent writer): a retry reads it again.
	case errors.Is(err, persistence.ErrFenced), errors.Is(err, persistence.ErrConflict),
		errors.Is(err, persistence.ErrUnavailable), errors.Is(err, engine.ErrClosed), errors.Is(err, engine.ErrReleased), errors.Is(err, errUnavailable):
		code = connect.CodeUnavailable
	case errors.Is(err, persistence.ErrCorrupt):
		code = connect.CodeDataLoss
	case errors.Is(err, errUnauthenticated):
		code = connect.CodeUnauthenticated
	case errors.Is(err, errPermissionDenied):
		code = connect.CodePermissionDenied
	}
	var cause error
	var ie *internalError
	switch {
	case errors.As(err, &ie):
		cause = ie
	case code == connect.CodeInternal:
		cause = newInternal("internal error", err)
	case code == connect.CodeDataLoss:
		cause = newInternal("stored data is damaged", err)
	case errors.Is(err, persistence.ErrFenced):
		cause = errors.New("this replica no longer owns the handler; retry")
	case errors.Is(err, persistence.ErrFinished):
		cause = errors.New("the handler has finished meanwhile")
	case errors.Is(err, persistence.ErrConflict):
		cause = errors.New("the handler changed meanwhile; retry")
	case errors.As(err, new(*ownedError)):
		// Kept as is: the forwarder (forward.go) reads the owner from it.
		var owned *ownedError
		errors.As(err, &owned)
		cause = owned
	case code == connect.CodeUnavailable && errors.Is(err, persistence.ErrUnavailable):
		cause = newInternal("the store is unavailable; retry later", err)
	default:
		// Our own sentinels only pick the code; the message need not repeat it.
		msg := err.Error()
		for _, s := range []error{errInvalid, errAlreadyExists, errFailedPrecondition, errUnavailable, errNotFound, errUnauthenticated, errPermissionDenied, errResourceExhausted} {
			msg = strings.TrimPrefix(msg, s.Error()+": ")
		}
		cause = errors.New(msg)
	}
	out := connect.NewError(code, cause)
	if code == connect.CodeUnavailable {
		out = withRetryHint(out)
	}
	return out
}

// withRetryHint adds to an Unavailable error the hint that a retry after
// retryAfter may succeed (google.rpc.RetryInfo).
func withRetryHint(e *connect.Error) *connect.Error {
	if d, err := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(retryAfter)}); err == nil {
		e.AddDetail(d)
	}
	return e
}

// internalError is an error whose detail (a path, a library's message)
// is for the log only: its text is a public message and an error id.
type internalError struct {
	id     string
	public string
	detail error
	// logged: the detail is in the log already (hideStoreError).
	logged bool
}

func newInternal(public string, detail error) *internalError {
	return &internalError{id: errid.New(), public: public, detail: detail}
}

func (e *internalError) Error() string { return e.public + " (error id " + e.id + ")" }

// Unwrap keeps the cause visible to errors.Is (the code depends on it);
// its text never reaches a client.
func (e *internalError) Unwrap() error { return e.detail }

// hideStoreError is for store errors that leave the server other than as
// an RPC error: to the engine, which puts a step's error on the stream and
// in the handler's error. A store failure is logged here with an error id
// and replaced by a message without its detail; other errors pass.
func (s *Server) hideStoreError(err error) error {
	var ie *internalError
	switch {
	case err == nil, errors.As(err, &ie):
		return err
	case errors.Is(err, persistence.ErrUnavailable):
		ie = newInternal("the store is unavailable", err)
	case errors.Is(err, persistence.ErrCorrupt):
		ie = newInternal("stored data is damaged", err)
	default:
		return err
	}
	ie.logged = true
	s.log.Error("store error", "error_id", ie.id, "err", err)
	return ie
}

// hidingStarter starts children through next and hides store failures
// from its errors, which become the parent's step error.
type hidingStarter struct {
	s    *Server
	next engine.Starter
}

func (h hidingStarter) StartChild(ctx context.Context, parent, child, workflow string, input *structpb.Struct) error {
	return h.s.hideStoreError(h.next.StartChild(ctx, parent, child, workflow, input))
}

// errorEdge maps the error a call ends with to its Connect code
// (toConnect), and logs the detail of every internal error under the
// error id the client got. The interceptors outside it (metrics,
// tracing) see the code.
type errorEdge struct{ log *slog.Logger }

func (l errorEdge) report(ctx context.Context, procedure string, err error) {
	var ie *internalError
	if errors.As(err, &ie) && !ie.logged {
		// With ctx, the line carries the call's trace id (TraceLogHandler).
		l.log.ErrorContext(ctx, "call failed", "procedure", procedure, "code", connect.CodeOf(err).String(), "error_id", ie.id, "err", ie.detail)
	}
}

func (l errorEdge) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		res, err := next(ctx, req)
		if err = toConnect(err); err != nil {
			l.report(ctx, req.Spec().Procedure, err)
		}
		return res, err
	}
}

func (l errorEdge) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (l errorEdge) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		err := toConnect(next(ctx, conn))
		if err != nil {
			l.report(ctx, conn.Spec().Procedure, err)
		}
		return err
	}
}

// Errors of the service itself; wrapped with the details.
var (
	errInvalid            = errors.New("invalid argument")
	errAlreadyExists      = errors.New("already exists")
	errFailedPrecondition = errors.New("failed precondition")
	errUnavailable        = errors.New("unavailable")
	errNotFound           = errors.New("not found")
	errUnauthenticated    = errors.New("unauthenticated")
	errPermissionDenied   = errors.New("permission denied")
	errResourceExhausted  = errors.New("resource exhausted")
)
