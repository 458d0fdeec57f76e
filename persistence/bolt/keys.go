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

func statusKey(status byte, id string) []byte {
	return append([]byte{status}, id...)
}

func residencyKey(residency byte, id string) []byte {
	return append([]byte{residency}, id...)
}

func workflowPrefix(workflow string) []byte {
	return append([]byte(workflow), 0)
}

func workflowKey(workflow, id string) []byte {
	return append(workflowPrefix(workflow), id...)
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
