package live

import (
	"context"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// HandOver takes handler id out of memory without committing anything
// more, so that the replica to has it: its runs in progress stay in
// progress in its checkpoint (as at a drain) and run there. Loads of it
// meanwhile are answered with to, so calls go there. Its last commit
// lands before its lease is freed, so the next owner reads it. false:
// it is not here (or is being loaded).
func (s *Runtime) HandOver(ctx context.Context, id string, to *apierr.Owned) bool {
	c := &loadCall{done: make(chan struct{}), err: to}
	var h *engine.Handler
	if !s.loads.claim(id, c, func() bool {
		var ok bool
		h, ok = s.engine.Handler(id)
		return ok
	}) {
		return false
	}
	defer s.loads.finish(id, c, nil, to)
	h.Drop()
	s.idle.remove(id)
	if err := s.journal.Settled(ctx, id); err != nil {
		// Its lease is left to expire: nothing it committed is lost.
		s.owners.Forget(id)
		return true
	}
	s.owners.ReleaseNow(ctx, id)
	return true
}
