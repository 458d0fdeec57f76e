package live

import "github.com/wfd-dev/wfd/engine"

// Committed is told about every change the journal has made durable. The
// follow-ups it starts are best effort on the background context (they
// stop with the server); each is also redone where it matters (parents
// are re-checked at start-up, key waits look the log up when parking).
func (s *Runtime) Committed(c *engine.Change) {
	for _, w := range c.NewWaiters {
		switch {
		case w.Key != "":
			go s.recheckKey(c.HandlerID, w)
		case w.Children != nil:
			go s.RecheckChildren(c.HandlerID, w.Children)
		}
	}
	if c.Status.Terminal() && c.Parent != "" {
		go s.ChildEnded(c)
	}
	if c.Status == engine.StatusCancelled && len(c.Children) > 0 {
		go s.cancelChildren(c.Children)
	}
	if c.Slot != nil {
		s.slotChanged(c)
	}
	s.trackIdle(c)
	s.owners.Left(c)
	if c.Released {
		s.stats.Releases.Add(1)
		due := c.Deadline
		if c.Idle != nil {
			for _, w := range c.Idle.Waiters {
				if !w.Deadline.IsZero() && (due.IsZero() || w.Deadline.Before(due)) {
					due = w.Deadline
				}
			}
		}
		if !due.IsZero() {
			s.timers.notify(due)
		}
	}
}

// trackIdle updates the list of idle handlers in memory from a change, and
// wakes the reaper when the list passes the cap.
func (s *Runtime) trackIdle(c *engine.Change) {
	if s.idle.observe(c, s.opts.Now()) && s.reaper.keep >= 0 && s.idle.len() > s.reaper.keep {
		s.reaper.poke()
	}
}
