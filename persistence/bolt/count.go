package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"

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

// CountVersions counts the handlers of workflow by version, status and
// residency: a scan of the keys of idx_workflow_version under workflow|0,
// which are in (version, status, residency) order already, so equal
// combinations are adjacent and no metadata is read.
func (s *Store) CountVersions(ctx context.Context, workflow string) ([]persistence.VersionCount, error) {
	if err := persistence.ValidateWorkflowName(workflow); err != nil {
		return nil, fmt.Errorf("bolt: count versions: %w", err)
	}
	var out []persistence.VersionCount
	err := s.view(ctx, func(tx *bolt.Tx) error {
		prefix := workflowPrefix(workflow)
		c := bucket(tx, bucketVersion).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			version, status, residency, _, ok := parseVersionKey(k[len(prefix):])
			if !ok {
				return fmt.Errorf("%w: malformed %s key %q", persistence.ErrCorrupt, bucketVersion, k)
			}
			st, r := persistence.Status(status), persistence.Residency(residency)
			if n := len(out); n > 0 && out[n-1].Version == version && out[n-1].Status == st && out[n-1].Residency == r {
				out[n-1].Count++
				continue
			}
			out = append(out, persistence.VersionCount{Version: version, Status: st, Residency: r, Count: 1})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: count versions: %w", err)
	}
	return out, nil
}

// RunningVersions lists the versions of workflow with running handlers:
// a skip scan of idx_workflow_version, one seek for each version's
// running keys and one to the next version, so the pages it reads do not
// grow with the handlers (a full scan maps most of a large file into the
// process: the kernel maps the cached pages around each one read).
func (s *Store) RunningVersions(ctx context.Context, workflow string) ([]string, error) {
	if err := persistence.ValidateWorkflowName(workflow); err != nil {
		return nil, fmt.Errorf("bolt: running versions: %w", err)
	}
	var out []string
	err := s.view(ctx, func(tx *bolt.Tx) error {
		prefix := workflowPrefix(workflow)
		c := bucket(tx, bucketVersion).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); {
			version, _, _, _, ok := parseVersionKey(k[len(prefix):])
			if !ok {
				return fmt.Errorf("%w: malformed %s key %q", persistence.ErrCorrupt, bucketVersion, k)
			}
			// workflow|0|version|0|running|0 starts the running keys of
			// the version, in any residency.
			running := append(append(slices.Clip(prefix), version...), 0, byte(persistence.StatusRunning), 0)
			if rk, _ := c.Seek(running); rk != nil && bytes.HasPrefix(rk, running) {
				out = append(out, version)
			}
			// Versions hold no 0 byte, so workflow|0|version|1 is past
			// every key of this version and before the next version's.
			k, _ = c.Seek(append(append(slices.Clip(prefix), version...), 1))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: running versions: %w", err)
	}
	return out, nil
}
