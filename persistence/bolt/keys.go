package bolt

import (
	"bytes"
	"encoding/binary"
	"time"
)

// timeLen is the size of an encoded time.
const timeLen = 12

// appendTime appends a 12-byte encoding of t that sorts like t: seconds since
// the Unix epoch with the sign bit flipped (so negative seconds sort first),
// then nanoseconds. Unlike UnixNano it covers every representable time.
func appendTime(dst []byte, t time.Time) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.Unix())^(1<<63))
	return binary.BigEndian.AppendUint32(dst, uint32(t.Nanosecond()))
}

// parseTime decodes appendTime's encoding; ok is false if b is too short or
// the nanoseconds are out of range.
func parseTime(b []byte) (t time.Time, ok bool) {
	if len(b) < timeLen {
		return time.Time{}, false
	}
	sec := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
	nsec := binary.BigEndian.Uint32(b[8:])
	if nsec >= 1e9 {
		return time.Time{}, false
	}
	return time.Unix(sec, int64(nsec)).UTC(), true
}

// orderKey is time(created)|id, the order both listings list in (newest
// first: backwards), whatever the ids: handlers by CreatedAt, tasks by
// theirs, ties by id. The time has a fixed length, so byte order is
// (created, id) order, and the id is the rest of the key.
func orderKey(created time.Time, id string) []byte {
	return append(appendTime(make([]byte, 0, timeLen+len(id)), created), id...)
}

// orderKeyID returns the id at the end of an order key; ok is false if the
// key is too short to hold one.
func orderKeyID(order []byte) (id string, ok bool) {
	if _, ok := parseTime(order); !ok || len(order) == timeLen {
		return "", false
	}
	return string(order[timeLen:]), true
}

// The handler indexes that ListHandlers joins all end in the handler's
// order key, so a join walks them in creation order.

func statusKey(status byte, order []byte) []byte {
	return append([]byte{status}, order...)
}

func residencyKey(residency byte, order []byte) []byte {
	return append([]byte{residency}, order...)
}

func workflowPrefix(workflow string) []byte {
	return append([]byte(workflow), 0)
}

func workflowKey(workflow string, order []byte) []byte {
	return append(workflowPrefix(workflow), order...)
}

// versionStatePrefix is workflow|0|version|0|status|0|residency|0: the
// handlers of one version in one status and residency, in order.
func versionStatePrefix(workflow, version string, status, residency byte) []byte {
	return versionStateKey(workflow, version, status, residency, nil)
}

// versionStateKey is versionStatePrefix followed by order, in one
// allocation (every write of a handler makes it, twice).
func versionStateKey(workflow, version string, status, residency byte, order []byte) []byte {
	k := make([]byte, 0, len(workflow)+len(version)+6+len(order))
	k = append(k, workflow...)
	k = append(k, 0)
	k = append(k, version...)
	k = append(k, 0, status, 0, residency, 0)
	return append(k, order...)
}

// parseVersionKey splits the part of an idx_workflow_version key after
// workflow|0 into the version, status, residency and order key; ok is
// false if it is malformed.
func parseVersionKey(rest []byte) (version string, status, residency byte, order []byte, ok bool) {
	i := bytes.IndexByte(rest, 0)
	if i < 0 || len(rest) < i+5 || rest[i+2] != 0 || rest[i+4] != 0 {
		return "", 0, 0, nil, false
	}
	return string(rest[:i]), rest[i+1], rest[i+3], rest[i+5:], true
}

// handlerKeyOrder returns the order key at the end of a key of one of the
// handler indexes ListHandlers joins; ok is false if the key is malformed.
func handlerKeyOrder(bucketName string, k []byte) (order []byte, ok bool) {
	switch bucketName {
	case bucketStatus, bucketResidency:
		if len(k) < 1 {
			return nil, false
		}
		k = k[1:]
	case bucketWorkflow:
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			return nil, false
		}
		k = k[i+1:]
	case bucketVersion:
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			return nil, false
		}
		_, _, _, order, ok := parseVersionKey(k[i+1:])
		if !ok {
			return nil, false
		}
		k = order
	}
	if _, ok := orderKeyID(k); !ok {
		return nil, false
	}
	return k, true
}

func idleTimeKey(since time.Time, id string) []byte {
	return append(appendTime(make([]byte, 0, timeLen+len(id)), since), id...)
}

func timerKey(due time.Time, handler, waiter string) []byte {
	k := appendTime(make([]byte, 0, timeLen+len(handler)+1+len(waiter)), due)
	k = append(k, handler...)
	k = append(k, 0)
	return append(k, waiter...)
}

// parseTimerKey splits a timer key; ok is false if it is malformed.
func parseTimerKey(k []byte) (due time.Time, handler, waiter string, ok bool) {
	due, ok = parseTime(k)
	if !ok {
		return time.Time{}, "", "", false
	}
	rest := k[timeLen:]
	i := bytes.IndexByte(rest, 0)
	if i <= 0 {
		return time.Time{}, "", "", false
	}
	return due, string(rest[:i]), string(rest[i+1:]), true
}

func waitKeyPrefix(key string) []byte {
	return append([]byte(key), 0)
}

func waitKey(key, handler, waiter string) []byte {
	k := make([]byte, 0, len(key)+len(handler)+len(waiter)+2)
	k = append(k, key...)
	k = append(k, 0)
	k = append(k, handler...)
	k = append(k, 0)
	return append(k, waiter...)
}

func recordPrefix(id string) []byte {
	return append([]byte(id), 0)
}

func recordKey(id string, seq uint64) []byte {
	k := make([]byte, 0, len(id)+1+8)
	k = append(k, id...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

// prefixEnd returns the smallest key greater than every key with the given
// prefix, or nil if there is none (the prefix is empty or all 0xff).
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func taskStatusPrefix(status byte) []byte {
	return []byte{status}
}

func taskAssigneePrefix(status byte, assignee string) []byte {
	k := make([]byte, 0, 1+len(assignee)+1)
	k = append(k, status)
	k = append(k, assignee...)
	return append(k, 0)
}

// taskHandlerPrefix (handler|0) and workflowPrefix (workflow|0) prefix the
// task indexes by handler and by workflow.
func taskHandlerPrefix(handler string) []byte {
	return append([]byte(handler), 0)
}

// taskKeyOrder returns the order part of a key of one of the task indexes
// (the part after the first 0 byte, or after the status byte for
// idx_task_status); ok is false if the key is malformed.
func taskKeyOrder(bucketName string, k []byte) (order []byte, ok bool) {
	switch bucketName {
	case bucketTaskStatus:
		if len(k) < 1 {
			return nil, false
		}
		return k[1:], true
	case bucketTaskAssignee:
		if len(k) < 1 {
			return nil, false
		}
		k = k[1:]
	}
	i := bytes.IndexByte(k, 0)
	if i < 0 {
		return nil, false
	}
	return k[i+1:], true
}

func seqKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), seq)
}

// publishedKeyPrefix is key|0|handler|0; handler "" (a global event) gives
// key|0|0, which no handler's prefix equals, since ids are not empty.
func publishedKeyPrefix(key, handler string) []byte {
	k := make([]byte, 0, len(key)+len(handler)+2+timeLen+8)
	k = append(k, key...)
	k = append(k, 0)
	k = append(k, handler...)
	return append(k, 0)
}

// publishedKeyKey is key|0|handler|0|time(at)|seq: within one key and
// addressee, oldest first, ties by seq.
func publishedKeyKey(key, handler string, at time.Time, seq uint64) []byte {
	k := appendTime(publishedKeyPrefix(key, handler), at)
	return binary.BigEndian.AppendUint64(k, seq)
}
