package live

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/server/internal/apierr"
	"github.com/wfd-dev/wfd/server/internal/observe"
)

func (s *Runtime) DeleteHandler(ctx context.Context, id string) error {
	// The handler's turn keeps RunWorkflow with its id (and a child's
	// start) from creating it again between the check and the commit.
	unlock := s.turns.Lock(id)
	defer unlock()
	meta, err := s.deletable(ctx, id)
	if err != nil {
		return err
	}
	if err := s.store.Write(ctx, deleteChange(&meta)); err != nil {
		return fmt.Errorf("deleting handler %s: %w", id, err)
	}
	s.stats.Deleted(observe.DeletedByRequest, 1)
	s.log.Info("handler deleted", "handler", id, "status", meta.Status.String())
	return nil
}

// deleteChange deletes h as it was read: if it changed since (another
// replica deleted it and a new handler took its id), the Write fails.
func deleteChange(h *persistence.Handler) persistence.Change {
	revision := h.Revision
	return persistence.Change{Handler: persistence.Handler{ID: h.ID}, Delete: true, IfRevision: &revision}
}

// deletable returns the stored metadata of a handler that may be deleted
// now, or why not. The caller holds the handler's turn.
//
// Only a finished handler may go: a running one, in memory or released,
// would lose its state. A finished child whose parent still runs may not
// go either: the parent's step runs again when a wait of it resolves, and
// starting the child again finds no child under its id and starts a fresh
// one, so the parent would run it twice. A child of a finished (or
// deleted) parent, and a parent whose children live on, may go: children
// are handlers of their own, deleted on their own.
func (s *Runtime) deletable(ctx context.Context, id string) (persistence.Handler, error) {
	// The store holds the handler's latest change once the journal has
	// committed what it was handed.
	if err := s.journal.Settled(ctx, id); err != nil {
		return persistence.Handler{}, err
	}
	meta, err := s.Meta(ctx, id)
	if err != nil {
		return meta, err
	}
	if !meta.Status.Terminal() {
		return meta, fmt.Errorf("%w: handler %s is %s: cancel it first", apierr.ErrFailedPrecondition, id, meta.Status)
	}
	if meta.Parent != "" {
		parent, err := s.Meta(ctx, meta.Parent)
		switch {
		case errors.Is(err, apierr.ErrNotFound):
		case err != nil:
			return meta, err
		case !parent.Status.Terminal():
			return meta, fmt.Errorf("%w: handler %s is a child of %s, which is still running: delete it once the parent has finished",
				apierr.ErrFailedPrecondition, id, meta.Parent)
		}
	}
	return meta, nil
}

// deleteFinished deletes those of ids that are deletable, in one commit,
// and returns how many it deleted. Others (deleted meanwhile, a child of a
// running parent, metadata that cannot be decoded) are skipped. The
// retention pass calls it.
func (s *Runtime) deleteFinished(ctx context.Context, ids []string) (int, error) {
	// Turns are taken in id order, so two callers holding several never
	// wait for each other in a circle.
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	changes := make([]persistence.Change, 0, len(ids))
	for _, id := range ids {
		unlock := s.turns.Lock(id)
		defer unlock()
		meta, err := s.deletable(ctx, id)
		switch {
		case err == nil:
			changes = append(changes, deleteChange(&meta))
		case errors.Is(err, apierr.ErrNotFound), errors.Is(err, apierr.ErrFailedPrecondition):
		case errors.Is(err, persistence.ErrCorrupt):
			// Left for an operator (wfd store check); the others go.
			s.log.Warn("retention: a finished handler cannot be read", "handler", id, "err", err)
		default:
			return 0, err
		}
	}
	if len(changes) == 0 {
		return 0, nil
	}
	err := s.store.Write(ctx, changes...)
	deleted := len(changes)
	if errors.Is(err, persistence.ErrNotFound) || errors.Is(err, persistence.ErrConflict) {
		// Some handler went, or changed, since it was read (another
		// replica's retention deleted it, a new handler took its id):
		// the others go one by one.
		deleted, err = 0, nil
		for _, c := range changes {
			switch werr := s.store.Write(ctx, c); {
			case werr == nil:
				deleted++
			case errors.Is(werr, persistence.ErrNotFound), errors.Is(werr, persistence.ErrConflict):
			default:
				err = cmp.Or(err, werr)
			}
		}
	}
	if deleted > 0 {
		s.stats.Deleted(observe.DeletedByRetention, deleted)
	}
	if err != nil {
		return deleted, fmt.Errorf("deleting %d finished handlers: %w", len(changes), err)
	}
	return deleted, nil
}
