package apierr

import (
	"errors"
	"log/slog"

	"github.com/wfd-dev/wfd/internal/errid"
	"github.com/wfd-dev/wfd/persistence"
)

// Internal is an error whose detail (a path, a library's message) is for
// the log only: its text is a public message and an error id.
type Internal struct {
	id     string
	public string
	detail error
	// logged: the detail is in the log already (Hide).
	logged bool
}

// NewInternal returns an error that reads public and an error id, and
// wraps detail.
func NewInternal(public string, detail error) *Internal {
	return &Internal{id: errid.New(), public: public, detail: detail}
}

func (e *Internal) Error() string { return e.public + " (error id " + e.id + ")" }

// Unwrap keeps the cause visible to errors.Is (the code depends on it);
// its text never reaches a client.
func (e *Internal) Unwrap() error { return e.detail }

// Hide is for store errors that leave the server other than as an RPC
// error: to the engine, which puts a step's error on the stream and in
// the handler's error. A store failure is logged here with an error id and
// replaced by a message without its detail; other errors pass.
func Hide(log *slog.Logger, err error) error {
	var ie *Internal
	switch {
	case err == nil, errors.As(err, &ie):
		return err
	case errors.Is(err, persistence.ErrUnavailable):
		ie = NewInternal("the store is unavailable", err)
	case errors.Is(err, persistence.ErrCorrupt):
		ie = NewInternal("stored data is damaged", err)
	default:
		return err
	}
	ie.logged = true
	log.Error("store error", "error_id", ie.id, "err", err)
	return ie
}
