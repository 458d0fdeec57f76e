package bolt

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
)

// Count returns the handler and task counters, which every Write maintains in the
// same transaction as the indexes they count, so Count reads a few keys
// instead of scanning.
func (s *Store) Count(ctx context.Context) (persistence.Counts, error) {
	counts := persistence.Counts{
		ByStatus:      make(map[persistence.Status]int64),
		ByResidency:   make(map[persistence.Residency]int64),
		TasksByStatus: make(map[persistence.TaskStatus]int64),
	}
	err := s.view(ctx, func(tx *bolt.Tx) error {
		meta := bucket(tx, bucketMeta)
		get := func(key string) (int64, error) {
			n, ok := counterValue(meta.Get([]byte(key)))
			if !ok {
				return 0, fmt.Errorf("%w: counter %s", persistence.ErrCorrupt, key)
			}
			return n, nil
		}
		var err error
		if counts.Handlers, err = get(counterHandlers); err != nil {
			return err
		}
		if counts.Idle, err = get(counterIdle); err != nil {
			return err
		}
		for _, st := range persistence.Statuses() {
			if counts.ByStatus[st], err = get(counterStatusPrefix + string([]byte{byte(st)})); err != nil {
				return err
			}
		}
		for _, r := range persistence.Residencies() {
			if counts.ByResidency[r], err = get(counterResidencyPrefix + string([]byte{byte(r)})); err != nil {
				return err
			}
		}
		for _, st := range persistence.TaskStatuses() {
			if counts.TasksByStatus[st], err = get(counterTaskStatusPrefix + string([]byte{byte(st)})); err != nil {
				return err
			}
			counts.Tasks += counts.TasksByStatus[st]
		}
		return nil
	})
	if err != nil {
		return persistence.Counts{}, fmt.Errorf("bolt: count: %w", err)
	}
	return counts, nil
}
