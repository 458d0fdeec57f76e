package apierr

import (
	"errors"
	"fmt"
)

// Errors of the service itself; wrapped with the details. Each picks a
// code (ToConnect); the message a client gets leaves the sentinel's own
// text out.
var (
	ErrInvalid            = errors.New("invalid argument")
	ErrAlreadyExists      = errors.New("already exists")
	ErrFailedPrecondition = errors.New("failed precondition")
	ErrUnavailable        = errors.New("unavailable")
	ErrNotFound           = errors.New("not found")
	ErrUnauthenticated    = errors.New("unauthenticated")
	ErrPermissionDenied   = errors.New("permission denied")
	ErrResourceExhausted  = errors.New("resource exhausted")
	ErrOutOfRange         = errors.New("out of range")
)

// sentinels are the errors above, whose text ToConnect trims from messages.
var sentinels = [...]error{ErrInvalid, ErrAlreadyExists, ErrFailedPrecondition, ErrUnavailable, ErrNotFound,
	ErrUnauthenticated, ErrPermissionDenied, ErrResourceExhausted, ErrOutOfRange}

// ErrShuttingDown refuses a call that arrives during the drain: nothing
// was done, so a retry (here once back, or on another server) is safe.
var ErrShuttingDown = fmt.Errorf("%w: server is shutting down; nothing was done: retry", ErrUnavailable)
