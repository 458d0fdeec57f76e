package live

// Lost handlers: a handler whose change the journal could not commit
// leaves memory without it (engine.ErrLost) and stands where its last
// durable checkpoint says. The server forgets it as idle, and, when the
// store could not commit (a full disk, an I/O error) rather than refused
// the change, loads it again once the store commits: a handler that was
// busy then goes on by itself (its runs in progress run again, as after a
// crash), and one that was idle is in memory again, as its stored
// residency says. A handler whose change the store refused is loaded by
// the next call that needs it (loading it at once would likely make the
// same change, refused again).

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/wfd-dev/wfd/engine"
	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
)

// Lost is told about every change the journal could not commit, after the
// engine has marked its handler Lost.
func (s *Runtime) Lost(c *engine.Change, err error) {
	// A handler loaded again since has its own place on the list (the
	// engine does not return a lost one).
	if _, ok := s.engine.Handler(c.HandlerID); !ok {
		s.idle.remove(c.HandlerID)
		if errors.Is(err, persistence.ErrFenced) {
			// Another replica holds its lease: the handler is its now.
			s.owners.Forget(c.HandlerID)
		} else {
			s.owners.Release(c.HandlerID)
		}
	}
	if errors.Is(err, persistence.ErrUnavailable) {
		s.reloads.add(c.HandlerID)
	}
}

// reloader loads lost handlers again once the store commits (see above).
// It is one goroutine, parked while there is nothing to load.
type reloader struct {
	s    *Runtime
	kick chan struct{}

	mu  sync.Mutex
	ids map[string]struct{}
}

// reloadRetry is how long the reloader waits before it tries loads again
// that failed for want of the store while commits succeed.
const reloadRetry = time.Second

// add asks for the handler to be loaded again.
func (r *reloader) add(id string) {
	r.put(id)
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *reloader) put(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids == nil {
		r.ids = map[string]struct{}{}
	}
	r.ids[id] = struct{}{}
}

func (r *reloader) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.ids))
	for id := range r.ids {
		out = append(out, id)
	}
	r.ids = nil
	return out
}

func (r *reloader) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		for {
			if !r.s.health.WhenCommitting(ctx) {
				return
			}
			ids := r.take()
			if len(ids) == 0 {
				break
			}
			if r.reload(ctx, ids) == 0 {
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(reloadRetry):
			}
		}
	}
}

// reload loads the handlers, and returns how many it must try again.
func (r *reloader) reload(ctx context.Context, ids []string) (again int) {
	loaded := 0
	for _, id := range ids {
		_, err := r.s.Live(ctx, id)
		switch {
		case err == nil:
			loaded++
		case ctx.Err() != nil:
			return 0
		case errors.Is(err, apierr.ErrNotFound), errors.Is(err, engine.ErrHandlerDone):
			// Never created, or finished (or failed while loading).
		case errors.Is(err, persistence.ErrUnavailable):
			r.put(id)
			again++
		default:
			r.s.log.Warn("loading a lost handler again", "handler", id, "err", err)
		}
	}
	if loaded > 0 {
		r.s.log.Info("loaded handlers again after their changes could not be committed", "handlers", loaded)
	}
	return again
}
