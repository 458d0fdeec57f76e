package server

// Hooks for the server's black-box tests (package server_test).

import "github.com/wfd-dev/wfd/engine"

// Engine returns the server's engine.
func (s *Server) Engine() *engine.Engine { return s.engine }

// Reclaims returns how many times the server has given memory back after
// releases (see Options.ReclaimAfter).
func (s *Server) Reclaims() int64 { return s.stats.Reclaims.Load() }

// Watched returns how many handlers the journal keeps committed metadata
// for, for callers waiting to answer with it (journal.watch).
func (s *Server) Watched() int {
	return s.journal.Watched()
}
