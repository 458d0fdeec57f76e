package live

import (
	"context"
	"errors"

	"github.com/wfd-dev/wfd/engine"
)

// claimStart claims handler id, about to be started here, as a load
// claims it (loads), and returns the func that ends the claim with the
// start's outcome. A start claims before it takes the handler's lease,
// so that a call for the id meanwhile (a SendEvent that starts the
// handler if it is missing, say) waits for the start instead of loading
// the handler: such a load would find nothing in the store and free the
// lease the start holds, and the start's commit would then be fenced out.
// The claim also keeps the handler from being handed over to another
// replica (handOver) before its start is acknowledged, which would lose
// it.
//
// If another claim holds the id (a load, another start), claimStart
// waits for it to end first. Callers that waited for this claim get the
// started handler, or, when the start started nothing (the id was taken
// already, or the start failed), look again.
func (s *Runtime) claimStart(ctx context.Context, id string) (func(*engine.Handler, error), error) {
	c := &loadCall{done: make(chan struct{})}
	for {
		busy := s.loads.claimOrCurrent(id, c)
		if busy == nil {
			return func(h *engine.Handler, err error) {
				if errors.Is(err, engine.ErrHandlerExists) {
					h, err = s.liveHandler(id)
				}
				if err != nil {
					h = nil // nothing started: those waiting look again
				}
				s.loads.finish(id, c, h, nil)
				if h != nil {
					s.workers.KickRoutes() // its runs may wait for a worker elsewhere
				}
			}, nil
		}
		select {
		case <-busy.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
