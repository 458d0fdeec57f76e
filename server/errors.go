package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
)

// retryAfter is the hint given with Unavailable errors.
const retryAfter = time.Second

// toConnect maps an error from the engine, the store or the request checks
// to a Connect error with the right code. It is the only place that decides
// codes.
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
	case errors.Is(err, engine.ErrHandlerDone), errors.Is(err, engine.ErrNotIdle), errors.Is(err, errFailedPrecondition):
		code = connect.CodeFailedPrecondition
	case errors.Is(err, engine.ErrUnknownWorkflow), errors.Is(err, errNotFound), errors.Is(err, persistence.ErrNotFound):
		code = connect.CodeNotFound
	case errors.Is(err, errInvalid), errors.Is(err, engine.ErrInvalidEvent), errors.Is(err, persistence.ErrInvalid):
		code = connect.CodeInvalidArgument
	case errors.Is(err, engine.ErrHandlerExists), errors.Is(err, errAlreadyExists):
		code = connect.CodeAlreadyExists
	case errors.Is(err, persistence.ErrUnavailable), errors.Is(err, engine.ErrClosed), errors.Is(err, engine.ErrReleased), errors.Is(err, errUnavailable):
		code = connect.CodeUnavailable
	case errors.Is(err, persistence.ErrCorrupt):
		code = connect.CodeDataLoss
	}
	// Our own sentinels only pick the code; the message need not repeat it.
	msg := err.Error()
	for _, s := range []error{errInvalid, errAlreadyExists, errFailedPrecondition, errUnavailable, errNotFound} {
		msg = strings.TrimPrefix(msg, s.Error()+": ")
	}
	out := connect.NewError(code, errors.New(msg))
	if code == connect.CodeUnavailable {
		if d, derr := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(retryAfter)}); derr == nil {
			out.AddDetail(d)
		}
	}
	return out
}

// Errors of the service itself; wrapped with the details.
var (
	errInvalid            = errors.New("invalid argument")
	errAlreadyExists      = errors.New("already exists")
	errFailedPrecondition = errors.New("failed precondition")
	errUnavailable        = errors.New("unavailable")
	errNotFound           = errors.New("not found")
)
