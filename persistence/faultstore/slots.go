package faultstore

import (
	"context"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// The methods of persistence.Slots, each its Funcs field or the inner
// store's.

// UpdateSlots implements persistence.Store.
func (s *Store) UpdateSlots(ctx context.Context, k persistence.SlotKey, c persistence.SlotChange) (persistence.SlotResult, error) {
	s.Calls.UpdateSlots.Add(1)
	if f := s.current().UpdateSlotsFunc; f != nil {
		return f(ctx, k, c)
	}
	return s.inner.UpdateSlots(ctx, k, c)
}

// SlotOf implements persistence.Store.
func (s *Store) SlotOf(ctx context.Context, k persistence.SlotKey, id string) (int, error) {
	s.Calls.SlotOf.Add(1)
	if f := s.current().SlotOfFunc; f != nil {
		return f(ctx, k, id)
	}
	return s.inner.SlotOf(ctx, k, id)
}

// ListSlots implements persistence.Store.
func (s *Store) ListSlots(ctx context.Context, k persistence.SlotKey, limit int) (holders, queue []persistence.SlotEntry, err error) {
	s.Calls.ListSlots.Add(1)
	if f := s.current().ListSlotsFunc; f != nil {
		return f(ctx, k, limit)
	}
	return s.inner.ListSlots(ctx, k, limit)
}

// SlotKeys implements persistence.Store.
func (s *Store) SlotKeys(ctx context.Context, after persistence.SlotKey, limit int) ([]persistence.SlotKeyInfo, error) {
	s.Calls.SlotKeys.Add(1)
	if f := s.current().SlotKeysFunc; f != nil {
		return f(ctx, after, limit)
	}
	return s.inner.SlotKeys(ctx, after, limit)
}

// DueSlots implements persistence.Store.
func (s *Store) DueSlots(ctx context.Context, before time.Time, limit int) ([]persistence.SlotKey, error) {
	s.Calls.DueSlots.Add(1)
	if f := s.current().DueSlotsFunc; f != nil {
		return f(ctx, before, limit)
	}
	return s.inner.DueSlots(ctx, before, limit)
}

// PendingSlots implements persistence.Store.
func (s *Store) PendingSlots(ctx context.Context, limit int) ([]persistence.SlotPending, error) {
	s.Calls.PendingSlots.Add(1)
	if f := s.current().PendingSlotsFunc; f != nil {
		return f(ctx, limit)
	}
	return s.inner.PendingSlots(ctx, limit)
}
