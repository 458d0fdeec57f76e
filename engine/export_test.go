package engine

// Hooks for the engine's black-box tests (package engine_test).

// CompactAlways makes every handler of e that parks idle keep its events'
// data encoded, however few handlers are in memory, so that the tests run
// freeze.go's paths. Options cannot ask for it: 0 takes
// DefaultCompactIdleAbove, and "more than 0 handlers in memory" is always
// true of a handler that parks. Call it before e starts handlers.
func CompactAlways(e *Engine) { e.opts.CompactIdleAbove = 0 }

// Parked reports whether h's loop goroutine is not running (it parked, or
// exited), so that a test can act on a parked handler.
func Parked(h *Handler) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.running
}

// WaitingRefusals is how many SendEvent refusals wait for the handler's
// changes to be durable (refusal.go).
func WaitingRefusals(h *Handler) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.refusals == nil {
		return 0
	}
	return len(*h.refusals)
}
