package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
)

// entry is one index entry derived from a handler's metadata.
type entry struct {
	bucket string
	key    []byte
	value  []byte // empty (not nil) when the key says it all
}

func (e entry) same(o entry) bool {
	return e.bucket == o.bucket && bytes.Equal(e.key, o.key) && bytes.Equal(e.value, o.value)
}

// entriesOf returns every index entry of h. The indexes ListHandlers joins
// end in h's order key (creation time, then id).
func entriesOf(h *persistence.Handler) []entry {
	order := orderKey(h.CreatedAt, h.ID)
	es := make([]entry, 0, 8+2*len(h.Waiters))
	es = append(es,
		entry{bucketCreated, order, []byte{}},
		entry{bucketStatus, statusKey(byte(h.Status), order), []byte{}},
		entry{bucketWorkflow, workflowKey(h.Workflow, order), []byte{}},
		entry{bucketResidency, residencyKey(byte(h.Residency), order), []byte{}},
		entry{bucketVersion, versionStateKey(h.Workflow, h.WorkflowVersion, byte(h.Status), byte(h.Residency), order), []byte{}},
	)
	if !h.IdleSince.IsZero() {
		es = append(es,
			entry{bucketIdle, order, appendTime(nil, h.IdleSince)},
			entry{bucketIdleTime, idleTimeKey(h.IdleSince, h.ID), []byte{}},
		)
	}
	if h.Status.Terminal() && !h.CompletedAt.IsZero() {
		es = append(es, entry{bucketFinished, idleTimeKey(h.CompletedAt, h.ID), []byte{}})
	}
	if !h.Deadline.IsZero() {
		// The handler's own deadline: a timer with no waiter.
		es = append(es, entry{bucketTimers, timerKey(h.Deadline, h.ID, ""), []byte{}})
	}
	es = append(es, attrEntries(h, order)...)
	for i := range h.Waiters {
		w := &h.Waiters[i]
		if !w.Deadline.IsZero() {
			es = append(es, entry{bucketTimers, timerKey(w.Deadline, h.ID, w.ID), []byte{}})
		}
		if w.Key != "" {
			es = append(es, entry{bucketWaitKeys, waitKey(w.Key, h.ID, w.ID), []byte{}})
		}
	}
	return es
}

// listIndexes lists the handler indexes whose keys end in an order key.
var listIndexes = []string{bucketCreated, bucketStatus, bucketWorkflow, bucketResidency, bucketIdle, bucketVersion}

// scanEntries finds the index entries of handler id without its metadata,
// which could not be decoded. It is the slow path that lets a write repair
// or delete a corrupt handler without leaving stale entries: without the
// creation time, no key of these indexes can be computed, so it scans
// them whole.
func scanEntries(tx *bolt.Tx, id string) []entry {
	var es []entry
	for _, name := range listIndexes {
		c := bucket(tx, name).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			order, ok := handlerKeyOrder(name, k)
			if !ok {
				continue
			}
			if got, _ := orderKeyID(order); got != id {
				continue
			}
			es = append(es, entry{name, bytes.Clone(k), bytes.Clone(v)})
			if name == bucketIdle && len(v) == timeLen {
				es = append(es, entry{bucketIdleTime, append(bytes.Clone(v), id...), []byte{}})
			}
		}
	}
	es = append(es, scanAttrEntries(tx, id)...)
	// idx_finished keys are time|id.
	c := bucket(tx, bucketFinished).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) > timeLen && string(k[timeLen:]) == id {
			es = append(es, entry{bucketFinished, bytes.Clone(k), []byte{}})
		}
	}
	// The handler id is the middle part of timer and wait keys.
	c = bucket(tx, bucketTimers).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if _, h, _, ok := parseTimerKey(k); ok && h == id {
			es = append(es, entry{bucketTimers, bytes.Clone(k), []byte{}})
		}
	}
	c = bucket(tx, bucketWaitKeys).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if parts := bytes.SplitN(k, []byte{0}, 3); len(parts) == 3 && string(parts[1]) == id {
			es = append(es, entry{bucketWaitKeys, bytes.Clone(k), []byte{}})
		}
	}
	return es
}

// taskEntriesOf returns every index entry of t: each task has exactly one
// entry in each task index, all ending in its order key.
func taskEntriesOf(t *persistence.Task) []entry {
	order := orderKey(t.CreatedAt, t.ID)
	status := byte(t.Status)
	return []entry{
		{bucketTaskStatus, append(taskStatusPrefix(status), order...), []byte{}},
		{bucketTaskAssignee, append(taskAssigneePrefix(status, t.Assignee), order...), []byte{}},
		{bucketTaskWorkflow, append(workflowPrefix(t.Workflow), order...), []byte{}},
		{bucketTaskHandler, append(taskHandlerPrefix(t.HandlerID), order...), []byte{}},
	}
}

// taskIndexes lists the buckets taskEntriesOf writes to.
var taskIndexes = []string{bucketTaskStatus, bucketTaskAssignee, bucketTaskWorkflow, bucketTaskHandler}

// scanTaskEntries finds the index entries of task id without its stored
// value, which could not be decoded: the slow path, a scan of every task
// index, that lets an upsert or a handler delete repair a corrupt task.
func scanTaskEntries(tx *bolt.Tx, id string) []entry {
	var es []entry
	for _, name := range taskIndexes {
		c := bucket(tx, name).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if order, ok := taskKeyOrder(name, k); ok {
				if got, ok := orderKeyID(order); ok && got == id {
					es = append(es, entry{name, bytes.Clone(k), []byte{}})
				}
			}
		}
	}
	return es
}

// has reports whether b holds key. It uses a cursor rather than Get != nil,
// because a key with an empty value may read back as a nil slice.
func has(b *bolt.Bucket, key []byte) bool {
	k, _ := b.Cursor().Seek(key)
	return k != nil && bytes.Equal(k, key)
}

// updateEntries replaces the entries old by the entries next, touching only
// those that differ (so an update that changes nothing indexed dirties no
// index page), and records the counter changes in d.
func updateEntries(tx *bolt.Tx, old, next []entry, d counters) error {
	for _, o := range old {
		if contains(next, o) {
			continue
		}
		if err := bucket(tx, o.bucket).Delete(o.key); err != nil {
			return fmt.Errorf("delete %s entry: %w", o.bucket, err)
		}
		d.entry(o, -1)
	}
	for _, n := range next {
		if contains(old, n) {
			continue
		}
		if err := bucket(tx, n.bucket).Put(n.key, n.value); err != nil {
			return fmt.Errorf("put %s entry: %w", n.bucket, err)
		}
		d.entry(n, +1)
	}
	return nil
}

func contains(es []entry, e entry) bool {
	for _, x := range es {
		if x.same(e) {
			return true
		}
	}
	return false
}

// Counter keys in the meta bucket.
const (
	counterHandlers         = "count/handlers"
	counterIdle             = "count/idle"
	counterStatusPrefix     = "count/status/"
	counterResidencyPrefix  = "count/residency/"
	counterTaskStatusPrefix = "count/task_status/"
)

// counters accumulates counter changes during one transaction; they are
// written once at its end.
type counters map[string]int64

func (d counters) entry(e entry, delta int64) {
	switch e.bucket {
	case bucketStatus:
		d[counterStatusPrefix+string(e.key[:1])] += delta
	case bucketResidency:
		d[counterResidencyPrefix+string(e.key[:1])] += delta
	case bucketIdle:
		d[counterIdle] += delta
	case bucketTaskStatus:
		d[counterTaskStatusPrefix+string(e.key[:1])] += delta
	}
}

// flush adds the accumulated changes to the stored counters.
func (d counters) flush(tx *bolt.Tx) error {
	meta := bucket(tx, bucketMeta)
	for k, delta := range d {
		if delta == 0 {
			continue
		}
		// A malformed counter restarts from zero rather than failing every
		// write: counters are a convenience, the indexes are the truth.
		n, _ := counterValue(meta.Get([]byte(k)))
		if err := meta.Put([]byte(k), binary.BigEndian.AppendUint64(nil, uint64(n+delta))); err != nil {
			return fmt.Errorf("update counter %s: %w", k, err)
		}
	}
	return nil
}

func counterValue(v []byte) (int64, bool) {
	if len(v) != 8 {
		return 0, v == nil
	}
	return int64(binary.BigEndian.Uint64(v)), true
}
