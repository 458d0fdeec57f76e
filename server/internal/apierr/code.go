package apierr

import (
	"context"
	"errors"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/wfd-dev/wfd/attrs"
	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/schedule"
)

// RetryAfter is the hint given with Unavailable errors.
const RetryAfter = time.Second

// ToConnect maps an error from the engine, the store or the request checks
// to a Connect error with the right code. It is the only place that decides
// codes, and Edge, the interceptor every service runs inside, the only
// caller: handlers and the interceptors inside it return their errors as
// they are (wrapping the sentinels of this package).
//
// It is also where internals stop: an error the service did not expect
// (Internal), a store failure (Unavailable from the store, DataLoss) can
// carry file paths and library detail. The client gets a clear message and
// an error id instead; Edge logs the detail under that id.
func ToConnect(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	code := codeOf(err)
	out := connect.NewError(code, publicCause(err, code))
	if code == connect.CodeUnavailable {
		out = WithRetryHint(out)
	}
	return out
}

// codeOf picks the code of an error by the sentinels it wraps.
func codeOf(err error) connect.Code {
	is := func(targets ...error) bool {
		for _, t := range targets {
			if errors.Is(err, t) {
				return true
			}
		}
		return false
	}
	switch {
	case is(context.Canceled):
		return connect.CodeCanceled
	// A handler of a version not registered here waits for it: a retry
	// may find it (a worker serving it connects).
	case errors.As(err, new(*engine.VersionMissingError)):
		return connect.CodeUnavailable
	case is(context.DeadlineExceeded):
		return connect.CodeDeadlineExceeded
	// A finished handler's error may also name its cause (an unknown
	// workflow, say): the handler's state decides the code.
	case is(engine.ErrHandlerDone, engine.ErrNotIdle, ErrFailedPrecondition, persistence.ErrFinished, engine.ErrTaskNotPending),
		errors.As(err, new(*engine.TaskHeldError)):
		return connect.CodeFailedPrecondition
	case is(engine.ErrUnknownWorkflow, engine.ErrUnknownVersion, ErrNotFound, persistence.ErrNotFound):
		return connect.CodeNotFound
	case is(ErrInvalid, engine.ErrInvalidEvent, persistence.ErrInvalid, engine.ErrInvalidPayload, engine.ErrInvalidInput, schedule.ErrInvalid, attrs.ErrInvalid):
		return connect.CodeInvalidArgument
	case is(ErrOutOfRange):
		return connect.CodeOutOfRange
	case is(engine.ErrLimit, ErrResourceExhausted):
		return connect.CodeResourceExhausted
	case is(engine.ErrHandlerExists, ErrAlreadyExists, persistence.ErrExists):
		return connect.CodeAlreadyExists
	// A replica whose lease was taken over: the call belongs on the
	// handler's new owner, so a retry may succeed. A change refused
	// because the handler changed since it was read (another replica, or
	// a concurrent writer): a retry reads it again.
	case is(persistence.ErrFenced, persistence.ErrConflict, persistence.ErrUnavailable, engine.ErrClosed, engine.ErrReleased, ErrUnavailable):
		return connect.CodeUnavailable
	case is(persistence.ErrCorrupt):
		return connect.CodeDataLoss
	case is(ErrUnauthenticated):
		return connect.CodeUnauthenticated
	case is(ErrPermissionDenied):
		return connect.CodePermissionDenied
	}
	return connect.CodeInternal
}

// publicCause is what a client is told of err, answered with code.
func publicCause(err error, code connect.Code) error {
	var ie *Internal
	var owned *Owned
	switch {
	case errors.As(err, &ie):
		return ie
	case code == connect.CodeInternal:
		return NewInternal("internal error", err)
	case code == connect.CodeDataLoss:
		return NewInternal("stored data is damaged", err)
	case errors.Is(err, persistence.ErrFenced):
		return errors.New("this replica no longer owns the handler; retry")
	case errors.Is(err, persistence.ErrFinished):
		return errors.New("the handler has finished meanwhile")
	case errors.Is(err, persistence.ErrConflict):
		return errors.New("the handler changed meanwhile; retry")
	case errors.As(err, &owned):
		return owned // kept as is: the forwarder reads the owner from it
	case code == connect.CodeUnavailable && errors.Is(err, persistence.ErrUnavailable):
		return NewInternal("the store is unavailable; retry later", err)
	}
	// Our own sentinels only pick the code; the message need not repeat it.
	msg := err.Error()
	for _, s := range sentinels {
		msg = strings.TrimPrefix(msg, s.Error()+": ")
	}
	return errors.New(msg)
}

// WithRetryHint adds to an Unavailable error the hint that a retry after
// RetryAfter may succeed (google.rpc.RetryInfo).
func WithRetryHint(e *connect.Error) *connect.Error {
	if d, err := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(RetryAfter)}); err == nil {
		e.AddDetail(d)
	}
	return e
}
