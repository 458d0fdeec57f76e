package bolt

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
)

// DueTimers returns waiter deadlines due at or before before, earliest
// first, from the time-ordered timer index.
func (s *Store) DueTimers(ctx context.Context, before time.Time, limit int) ([]persistence.Timer, error) {
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	end := appendTime(nil, before)
	var timers []persistence.Timer
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, bucketTimers).Cursor()
		for k, _ := c.First(); k != nil && len(timers) < limit; k, _ = c.Next() {
			if len(k) >= timeLen && bytes.Compare(k[:timeLen], end) > 0 {
				break
			}
			due, handler, waiter, ok := parseTimerKey(k)
			if !ok {
				return fmt.Errorf("%w: timer key %q", persistence.ErrCorrupt, k)
			}
			timers = append(timers, persistence.Timer{Due: due, HandlerID: handler, WaiterID: waiter})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: due timers: %w", err)
	}
	return timers, nil
}

// WaitingFor returns the ids of handlers with a waiter keyed key.
func (s *Store) WaitingFor(ctx context.Context, key string, limit int) ([]string, error) {
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	var ids []string
	err := s.view(ctx, func(tx *bolt.Tx) error {
		prefix := waitKeyPrefix(key)
		c := bucket(tx, bucketWaitKeys).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(ids) < limit; k, _ = c.Next() {
			rest := k[len(prefix):]
			i := bytes.IndexByte(rest, 0)
			if i <= 0 {
				return fmt.Errorf("%w: wait key %q", persistence.ErrCorrupt, k)
			}
			// Keys are ordered by handler, so a handler's waiters with the
			// same key are adjacent.
			if id := string(rest[:i]); len(ids) == 0 || ids[len(ids)-1] != id {
				ids = append(ids, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: waiting for %q: %w", key, err)
	}
	return ids, nil
}

// LongestIdle returns idle handlers idle since at or before before, longest
// idle first, from the time-ordered idle index.
func (s *Store) LongestIdle(ctx context.Context, before time.Time, limit int) ([]persistence.Idle, error) {
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	end := appendTime(nil, before)
	var idle []persistence.Idle
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, bucketIdleTime).Cursor()
		for k, _ := c.First(); k != nil && len(idle) < limit; k, _ = c.Next() {
			since, ok := parseTime(k)
			if !ok || len(k) == timeLen {
				return fmt.Errorf("%w: idle key %q", persistence.ErrCorrupt, k)
			}
			if bytes.Compare(k[:timeLen], end) > 0 {
				break
			}
			idle = append(idle, persistence.Idle{HandlerID: string(k[timeLen:]), Since: since})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: longest idle: %w", err)
	}
	return idle, nil
}

// FinishedBefore returns finished handlers completed at or before before,
// oldest first, from idx_finished (time(completed)|id).
func (s *Store) FinishedBefore(ctx context.Context, before time.Time, after *persistence.Finished, limit int) ([]persistence.Finished, error) {
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	end := appendTime(nil, before)
	var start []byte
	if after != nil {
		start = idleTimeKey(after.CompletedAt, after.HandlerID)
	}
	var out []persistence.Finished
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, bucketFinished).Cursor()
		k, _ := c.First()
		if start != nil {
			if k, _ = c.Seek(start); k != nil && bytes.Equal(k, start) {
				k, _ = c.Next()
			}
		}
		for ; k != nil && len(out) < limit; k, _ = c.Next() {
			at, ok := parseTime(k)
			if !ok || len(k) == timeLen {
				return fmt.Errorf("%w: finished key %q", persistence.ErrCorrupt, k)
			}
			if bytes.Compare(k[:timeLen], end) > 0 {
				break
			}
			out = append(out, persistence.Finished{HandlerID: string(k[timeLen:]), CompletedAt: at})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: finished before: %w", err)
	}
	return out, nil
}
