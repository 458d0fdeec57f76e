package bolt

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// GetTask returns a task.
func (s *Store) GetTask(ctx context.Context, id string) (persistence.Task, error) {
	var t persistence.Task
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		t, err = getTask(tx, id)
		return err
	})
	if err != nil {
		return persistence.Task{}, fmt.Errorf("bolt: get task: %w", err)
	}
	return t, nil
}

func getTask(tx *bolt.Tx, id string) (persistence.Task, error) {
	return seekTask(bucket(tx, bucketTasks).Cursor(), id)
}

// seekTask reads task id with one seek of c (a cursor of the tasks bucket,
// which a listing reuses for every task).
func seekTask(c *bolt.Cursor, id string) (persistence.Task, error) {
	k, v := c.Seek([]byte(id))
	if k == nil || string(k) != id {
		return persistence.Task{}, fmt.Errorf("task %q: %w", id, persistence.ErrNotFound)
	}
	return codec.DecodeStoredTask(id, v)
}

// putTask upserts t (validated, and belonging to the change's handler),
// moving only the index entries that changed.
func putTask(tx *bolt.Tx, t *persistence.Task, d counters) error {
	tasks := bucket(tx, bucketTasks)
	key := []byte(t.ID)
	exists := has(tasks, key)
	raw := tasks.Get(key)
	var oldEntries []entry
	if exists {
		old, err := codec.DecodeStoredTask(t.ID, raw)
		switch {
		case err != nil:
			// Overwriting repairs a corrupt task: its entries are found
			// by scanning the indexes.
			oldEntries = scanTaskEntries(tx, t.ID)
		case old.HandlerID != t.HandlerID:
			return fmt.Errorf("task %q belongs to handler %q, not %q: %w", t.ID, old.HandlerID, t.HandlerID, persistence.ErrConflict)
		default:
			oldEntries = taskEntriesOf(&old)
		}
	}
	enc, err := codec.EncodeTask(t)
	if err != nil {
		return err
	}
	if !exists || !bytes.Equal(raw, enc) {
		if err := tasks.Put(key, enc); err != nil {
			return fmt.Errorf("task %q: put: %w", t.ID, err)
		}
	}
	if err := updateEntries(tx, oldEntries, taskEntriesOf(t), d); err != nil {
		return fmt.Errorf("task %q: %w", t.ID, err)
	}
	return nil
}

// deleteTasks deletes every task of a handler, found through the handler
// index (so corrupt tasks go too).
func deleteTasks(tx *bolt.Tx, handler string, d counters) error {
	prefix := taskHandlerPrefix(handler)
	var ids []string
	c := bucket(tx, bucketTaskHandler).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id, ok := orderKeyID(k[len(prefix):])
		if !ok {
			return fmt.Errorf("%w: task handler key %q", persistence.ErrCorrupt, k)
		}
		ids = append(ids, id)
	}
	tasks := bucket(tx, bucketTasks)
	for _, id := range ids {
		var entries []entry
		if has(tasks, []byte(id)) {
			if t, err := codec.DecodeStoredTask(id, tasks.Get([]byte(id))); err == nil {
				entries = taskEntriesOf(&t)
			}
		}
		if entries == nil {
			// Corrupt, or missing behind a stale index entry.
			entries = scanTaskEntries(tx, id)
		}
		if err := tasks.Delete([]byte(id)); err != nil {
			return fmt.Errorf("task %q: delete: %w", id, err)
		}
		if err := updateEntries(tx, entries, nil, d); err != nil {
			return fmt.Errorf("task %q: %w", id, err)
		}
	}
	return nil
}

// ListTasks returns tasks matching q, newest first.
//
// Every task index ends in the task's order key, time(CreatedAt)|id, so
// each filter is a stream of order keys in descending order, read
// backwards from a prefix of an index, and several filters intersect with
// the leapfrog join of ListHandlers. An assignee filter reads
// idx_task_assignee under status|assignee|0 for each wanted status (all
// four without a status filter), so "pending tasks of X" is one key range.
// Without filters, the listing is the union of the four status prefixes of
// idx_task_status.
func (s *Store) ListTasks(ctx context.Context, q persistence.TaskQuery) ([]persistence.Task, string, error) {
	if err := q.Validate(); err != nil {
		return nil, "", fmt.Errorf("bolt: list tasks: %w", err)
	}
	if q.PostFiltered() {
		return backend.FilterTasks(ctx, q, s.listTasks)
	}
	return s.listTasks(ctx, q)
}

// listTasks lists by q's indexed filters (ListTasks).
func (s *Store) listTasks(ctx context.Context, q persistence.TaskQuery) ([]persistence.Task, string, error) {
	return list(ctx, s, listing[persistence.Task]{
		op: "list tasks", kind: "task", items: "tasks",
		version: taskTokenVersion, check: taskTokenCheck(&q),
		plan: func(tx *bolt.Tx) []idStream { return planTaskQuery(tx, &q) },
		get: func(tx *bolt.Tx) func(string) (persistence.Task, error) {
			// One cursor for every task of the page.
			c := bucket(tx, bucketTasks).Cursor()
			return func(id string) (persistence.Task, error) { return seekTask(c, id) }
		},
	}, q.PageToken, q.Limit())
}

// planTaskQuery returns one order-key stream per filter of q, the likely
// most selective first.
func planTaskQuery(tx *bolt.Tx, q *persistence.TaskQuery) []idStream {
	statuses := slices.Clone(q.Statuses)
	slices.Sort(statuses)
	statuses = slices.Compact(statuses)
	if len(statuses) == 0 {
		statuses = persistence.TaskStatuses()
	}
	union := func(name string, prefix func(status byte) []byte) idStream {
		var u unionStream
		for _, st := range statuses {
			u = append(u, &prefixStream{c: bucket(tx, name).Cursor(), prefix: prefix(byte(st))})
		}
		if len(u) == 1 {
			return u[0]
		}
		return u
	}
	assignees := q.Assignees
	if q.Assignee != "" {
		assignees = []string{q.Assignee}
	}
	assigneeUnion := func() idStream {
		var u unionStream
		for _, a := range assignees {
			u = append(u, union(bucketTaskAssignee, func(st byte) []byte { return taskAssigneePrefix(st, a) }))
		}
		if len(u) == 1 {
			return u[0]
		}
		return u
	}

	var streams []idStream
	if q.HandlerID != "" {
		streams = append(streams, &prefixStream{c: bucket(tx, bucketTaskHandler).Cursor(), prefix: taskHandlerPrefix(q.HandlerID)})
	}
	if len(assignees) > 0 {
		// Also answers the status filter, if any.
		streams = append(streams, assigneeUnion())
	}
	if q.Workflow != "" {
		streams = append(streams, &prefixStream{c: bucket(tx, bucketTaskWorkflow).Cursor(), prefix: workflowPrefix(q.Workflow)})
	}
	if len(assignees) == 0 && (len(q.Statuses) > 0 || len(streams) == 0) {
		// The status filter, or, with no filter at all, every task.
		streams = append(streams, union(bucketTaskStatus, taskStatusPrefix))
	}
	return streams
}
