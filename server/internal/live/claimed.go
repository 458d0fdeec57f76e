package live

import (
	"context"
	"errors"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
)

// resumeClaimed loads a handler whose lease this replica claimed for its
// due timer; the restored handler fires it. Once loaded, the handler's
// lease is freed as any handler's is, when it leaves memory and its last
// change is committed (leases.left); a load that failed did not enter
// memory under the claim, whose lease is freed here (if the load has not
// already).
func (s *Runtime) resumeClaimed(ctx context.Context, c persistence.Lease) {
	_, err := s.Live(ctx, c.Handler)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		// Shutting down: a load shared with another caller may still be
		// using the lease, and leaving frees every lease anyway.
	default:
		if !errors.Is(err, engine.ErrHandlerDone) {
			s.log.Warn("waking handler for its timer", "handler", c.Handler, "err", err)
		}
		s.ReleaseClaimed(c)
	}
}

// ReleaseClaimed frees the claimed lease of a handler that did not enter
// memory under it, unless a load (which may be using it: acquire finds it
// held) is under way or the handler is in memory after all. Checked under
// the loads' lock, where a load registers before it acquires.
func (s *Runtime) ReleaseClaimed(c persistence.Lease) {
	s.loads.unclaimed(c.Handler, func() {
		if _, live := s.engine.Handler(c.Handler); !live {
			s.owners.ReleaseClaimed(c)
		}
	})
}
