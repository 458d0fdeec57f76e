package bolt

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// Schedules live in two buckets: schedules (id → the encoded schedule)
// and idx_schedule_due (time(NextTick)|id → "", for each schedule that
// is not paused and has a next tick), changed in the same transaction,
// so DueSchedules is a range scan from the first key. A schedule's
// Revision is the next value of the schedules bucket's sequence, which
// rolls back with a transaction that fails: numbers never repeat, even
// for a schedule deleted and created again.
//
// Every call commits on its own through the group commit, as Publish
// does, and checks its condition (absent, revision) inside the
// transaction, so of concurrent updates on one revision one commits.

// scheduleDueKey is the index key of s, nil if s is not indexed.
func scheduleDueKey(s *persistence.Schedule) []byte {
	if !s.Due() {
		return nil
	}
	return idleTimeKey(s.NextTick, s.ID) // the same layout: time|id
}

// CreateSchedule stores s if no schedule has its id.
func (s *Store) CreateSchedule(ctx context.Context, sc persistence.Schedule) (persistence.Schedule, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Schedule{}, err
	}
	sc, err := backend.PrepareSchedule("create schedule", sc)
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("bolt: %w", err)
	}
	var out persistence.Schedule
	err = s.update(func(tx *bolt.Tx) error {
		if has(bucket(tx, bucketSchedules), []byte(sc.ID)) {
			return fmt.Errorf("schedule %q: %w", sc.ID, persistence.ErrExists)
		}
		var err error
		out, err = putSchedule(tx, sc, nil)
		return err
	})
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("bolt: create schedule %q: %w", sc.ID, storageError(err))
	}
	return out, nil
}

// putSchedule stores sc with the next revision and moves its index entry
// from oldKey (nil: none). It derives everything from tx, as update
// requires: sc is a copy.
func putSchedule(tx *bolt.Tx, sc persistence.Schedule, oldKey []byte) (persistence.Schedule, error) {
	b := bucket(tx, bucketSchedules)
	rev, err := b.NextSequence()
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("next revision: %w", err)
	}
	enc, err := backend.EncodeSchedule(&sc, rev)
	if err != nil {
		return persistence.Schedule{}, err
	}
	if err := b.Put([]byte(sc.ID), enc); err != nil {
		return persistence.Schedule{}, err
	}
	newKey := scheduleDueKey(&sc)
	if bytes.Equal(oldKey, newKey) {
		return sc, nil
	}
	due := bucket(tx, bucketScheduleDue)
	if oldKey != nil {
		if err := due.Delete(oldKey); err != nil {
			return persistence.Schedule{}, fmt.Errorf("delete due entry: %w", err)
		}
	}
	if newKey != nil {
		if err := due.Put(newKey, []byte{}); err != nil {
			return persistence.Schedule{}, fmt.Errorf("put due entry: %w", err)
		}
	}
	return sc, nil
}

// GetSchedule returns the schedule id.
func (s *Store) GetSchedule(ctx context.Context, id string) (persistence.Schedule, error) {
	var out persistence.Schedule
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		out, err = getSchedule(tx, id)
		return err
	})
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("bolt: get schedule: %w", err)
	}
	return out, nil
}

// getSchedule decodes the schedule id (decoding copies it out of the
// mapped file).
func getSchedule(tx *bolt.Tx, id string) (persistence.Schedule, error) {
	if err := persistence.ValidateScheduleID(id); err != nil {
		return persistence.Schedule{}, err
	}
	b := bucket(tx, bucketSchedules)
	if !has(b, []byte(id)) {
		return persistence.Schedule{}, fmt.Errorf("schedule %q: %w", id, persistence.ErrNotFound)
	}
	return codec.DecodeStoredSchedule(id, b.Get([]byte(id)))
}

// UpdateSchedule replaces the schedule sc.ID if its revision is
// expectRevision.
func (s *Store) UpdateSchedule(ctx context.Context, sc persistence.Schedule, expectRevision uint64) (persistence.Schedule, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Schedule{}, err
	}
	sc, err := backend.PrepareSchedule("update schedule", sc)
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("bolt: %w", err)
	}
	var out persistence.Schedule
	err = s.update(func(tx *bolt.Tx) error {
		// A stored value that cannot be decoded fails the update: its
		// revision, the condition, cannot be read. Delete removes it.
		stored, err := getSchedule(tx, sc.ID)
		if err != nil {
			return err
		}
		if err := backend.CheckScheduleRevision(sc.ID, stored.Revision, expectRevision); err != nil {
			return err
		}
		out, err = putSchedule(tx, sc, scheduleDueKey(&stored))
		return err
	})
	if err != nil {
		return persistence.Schedule{}, fmt.Errorf("bolt: update schedule %q: %w", sc.ID, storageError(err))
	}
	return out, nil
}

// DeleteSchedule removes the schedule id and its index entry.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := persistence.ValidateScheduleID(id); err != nil {
		return fmt.Errorf("bolt: delete schedule: %w", err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		b := bucket(tx, bucketSchedules)
		if !has(b, []byte(id)) {
			return fmt.Errorf("schedule %q: %w", id, persistence.ErrNotFound)
		}
		for _, k := range scheduleDueKeys(tx, id) {
			if err := bucket(tx, bucketScheduleDue).Delete(k); err != nil {
				return fmt.Errorf("delete due entry: %w", err)
			}
		}
		return b.Delete([]byte(id))
	})
	if err != nil {
		return fmt.Errorf("bolt: delete schedule %q: %w", id, storageError(err))
	}
	return nil
}

// scheduleDueKeys returns the index entries of the schedule id: the one
// its stored value says, or, if that cannot be decoded, every entry that
// names id (a scan of the index: schedules are few, and a value that
// cannot be read is rare), so that deleting it leaves no entry behind.
func scheduleDueKeys(tx *bolt.Tx, id string) [][]byte {
	if stored, err := getSchedule(tx, id); err == nil {
		if k := scheduleDueKey(&stored); k != nil {
			return [][]byte{k}
		}
		return nil
	}
	var keys [][]byte
	c := bucket(tx, bucketScheduleDue).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) > timeLen && string(k[timeLen:]) == id {
			keys = append(keys, bytes.Clone(k))
		}
	}
	return keys
}

// ListSchedules lists schedules in id order, a page after the token's
// id.
func (s *Store) ListSchedules(ctx context.Context, pageSize int, pageToken string) ([]persistence.Schedule, string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, "", err
	}
	after, err := backend.ScheduleAfter(pageToken)
	if err != nil {
		return nil, "", fmt.Errorf("bolt: list schedules: %w", err)
	}
	limit := persistence.SchedulePageSize(pageSize)
	var (
		out  backend.Listing[persistence.Schedule]
		last string
		more bool
	)
	err = s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, bucketSchedules).Cursor()
		k, v := c.First()
		if after != "" {
			if k, v = c.Seek([]byte(after)); k != nil && string(k) == after {
				k, v = c.Next()
			}
		}
		for n := 0; k != nil; k, v = c.Next() {
			if n == limit {
				more = true
				break
			}
			n++
			last = string(k)
			out.Add(codec.DecodeStoredSchedule(last, v))
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("bolt: list schedules: %w", err)
	}
	var next string
	if more {
		next = backend.ScheduleToken(last)
	}
	if err := out.Err("schedules"); err != nil {
		return out.Items, next, fmt.Errorf("bolt: list schedules: %w", err)
	}
	return out.Items, next, nil
}

// DueSchedules returns the schedules due at or before before, from
// idx_schedule_due.
func (s *Store) DueSchedules(ctx context.Context, before time.Time, limit int) ([]persistence.Schedule, error) {
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	end := appendTime(nil, before)
	var out backend.Listing[persistence.Schedule]
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, bucketScheduleDue).Cursor()
		for k, _ := c.First(); k != nil && len(out.Items) < limit; k, _ = c.Next() {
			if _, ok := parseTime(k); !ok || len(k) == timeLen {
				out.Skip(fmt.Errorf("%w: due schedule key %q", persistence.ErrCorrupt, k))
				continue
			}
			if bytes.Compare(k[:timeLen], end) > 0 {
				break
			}
			out.Add(getSchedule(tx, string(k[timeLen:])))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: due schedules: %w", err)
	}
	if err := out.Err("schedules"); err != nil {
		return out.Items, fmt.Errorf("bolt: due schedules: %w", err)
	}
	return out.Items, nil
}
