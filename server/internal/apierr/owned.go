package apierr

import (
	"errors"
	"fmt"
	"time"
)

// Owned refuses a call for a handler another live replica holds, or for
// a workflow whose workers are connected to another replica.
//
// It is Unavailable (ErrUnavailable), not FailedPrecondition: nothing was
// done, and the same call succeeds later without the client changing
// anything (the owner releases the handler, dies and its lease expires, or
// the forwarder has it answered there), so generic retry policies are
// right to retry it; the message names where the handler is meanwhile.
//
// It is also the contract forwarding depends on: ToConnect keeps it as the
// Connect error's cause, and the forwarder reads Owner and Address from it
// with errors.As.
type Owned struct {
	Handler, Owner, Address string
	// Workflow, if set: Owner is not the handler's owner but a replica
	// with the workers of its workflow.
	Workflow string
	// Until is when the owner's lease expires unless it renews it, by
	// this replica's clock (zero: not known): a call forwarded to an
	// owner that has not answered by then (it may be paused) is given up,
	// and its retry takes the handler over.
	Until time.Time
}

func (e *Owned) Error() string {
	addr := e.Address
	if addr == "" {
		addr = "no address advertised"
	}
	if e.Workflow != "" {
		return fmt.Sprintf("no worker of workflow %q is connected here; replica %q (%s) has them: retry there", e.Workflow, e.Owner, addr)
	}
	return fmt.Sprintf("handler %s is live on replica %q (%s): retry there, or here once it is released",
		e.Handler, e.Owner, addr)
}

// Unwrap makes an Owned error Unavailable.
func (e *Owned) Unwrap() error { return ErrUnavailable }

// IsOwned reports whether err refuses a call because another replica has
// what it needs.
func IsOwned(err error) bool {
	return errors.As(err, new(*Owned))
}
