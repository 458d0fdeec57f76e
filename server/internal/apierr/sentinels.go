package apierr

import "errors"

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
)

// sentinels are the errors above, whose text ToConnect trims from messages.
var sentinels = [...]error{ErrInvalid, ErrAlreadyExists, ErrFailedPrecondition, ErrUnavailable, ErrNotFound,
	ErrUnauthenticated, ErrPermissionDenied, ErrResourceExhausted}
