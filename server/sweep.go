package server

// Claims in replica mode: work no replica holds goes to exactly one. The
// scheduler claims the handlers with due timers (timers.go), and a sweep
// every third of the lease time claims the orphans: handlers some replica
// had in memory (ResidencyActive) whose lease has expired or was freed, as
// when a replica dies (SIGKILL, a lost machine) without leaving. Without
// the sweep they would wait for a call or a timer; with it they run on
// within about a lease time. Each claim is one transaction whose handlers
// no concurrent claim gets (persistence.Claimer); the claimed leases are
// held (leases.adopt) before the handlers are loaded.

import (
	"context"
	"errors"
	"time"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
)

// sweepBatch is how many orphans one claim takes.
const sweepBatch = 64

// sweep claims and resumes orphaned handlers every third of the lease
// time until ctx is done.
func (s *Server) sweep(ctx context.Context) {
	t := time.NewTicker(s.leases.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sweepOnce(ctx)
	}
}

// sweepOnce claims orphans until none is left, and resumes them as
// start-up recovery does: busy ones are loaded and run on, idle ones are
// marked released under the claimed lease, without being loaded.
func (s *Server) sweepOnce(ctx context.Context) {
	var n resumed
	for ctx.Err() == nil {
		claimed, err := s.leases.db.ClaimOrphans(ctx, s.leases.cfg.ID, sweepBatch, s.leases.cfg.LeaseTTL)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("claiming orphaned handlers", "err", err)
			}
			break
		}
		done := n.total()
		hs := s.claimedHandlers(ctx, s.leases.adopt(claimed))
		if err := s.resume(ctx, hs, &n); err != nil && ctx.Err() == nil {
			s.log.Warn("resuming orphaned handlers", "err", err)
		}
		for _, c := range claimed {
			s.releaseUnloaded(c)
		}
		// A full batch may have more behind it, unless some of it could
		// not be resumed (they would be claimed again at once).
		if len(claimed) < sweepBatch || n.total()-done < len(claimed) {
			break
		}
	}
	if n.any() {
		s.log.Info("resumed orphaned handlers", "replica", s.leases.cfg.ID, "resumed", n.resumed, "released", n.released, "failed", n.failed)
	}
}

// claimedHandlers reads the claimed handlers' metadata: those still
// running and not released are returned (to resume); the others' leases
// are freed after (releaseUnloaded). A handler already in memory here is
// left as it is.
func (s *Server) claimedHandlers(ctx context.Context, ids []string) []persistence.Handler {
	var hs []persistence.Handler
	for _, id := range ids {
		if _, ok := s.engine.Handler(id); ok {
			continue
		}
		h, err := s.store.GetHandler(ctx, id)
		switch {
		case err == nil && h.Status == persistence.StatusRunning && h.Residency == persistence.ResidencyActive:
			hs = append(hs, h)
		case err != nil && !errors.Is(err, persistence.ErrNotFound) && ctx.Err() == nil:
			s.log.Warn("reading a claimed handler", "handler", id, "err", err)
		}
	}
	return hs
}

// resumeClaimed loads a handler whose lease this replica claimed for its
// due timer; the restored handler fires it.
func (s *Server) resumeClaimed(ctx context.Context, c persistence.Lease) {
	if _, err := s.live(ctx, c.Handler); err != nil && ctx.Err() == nil && !errors.Is(err, engine.ErrHandlerDone) {
		s.log.Warn("waking handler for its timer", "handler", c.Handler, "err", err)
	}
	s.releaseUnloaded(c)
}

// releaseUnloaded frees the claimed lease of a handler that is not in
// memory and not being loaded (its load failed, it had finished, it was
// marked released, or it was not reached). Checked under loadMu, where a
// load registers before it acquires, so a load that starts later does not
// rely on the lease freed here: it acquires its own.
func (s *Server) releaseUnloaded(c persistence.Lease) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if _, loading := s.loading[c.Handler]; loading {
		return
	}
	if _, live := s.engine.Handler(c.Handler); live {
		return
	}
	s.leases.releaseClaimed(c)
}
