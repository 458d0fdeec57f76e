package bolt

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/wfd-dev/wfd/persistence"
)

// A page token is base64url(version | last position | check), where check
// is a hash of the listing's kind, its filters and the last position. The
// last position (a handler id for ListHandlers, an order key time|id for
// ListTasks) is where the next page continues (exclusive), which stays
// correct when entries are added or deleted between pages. The check makes
// a token that was damaged, used with different filters or with the other
// listing fail instead of silently listing the wrong entries. Query.Now is
// not covered, so "idle for 1h" pages relative to the time of each request.
const tokenVersion = 1

func packToken(last []byte, check uint64) string {
	b := make([]byte, 0, 1+len(last)+8)
	b = append(b, tokenVersion)
	b = append(b, last...)
	b = binary.BigEndian.AppendUint64(b, check)
	return base64.RawURLEncoding.EncodeToString(b)
}

// unpackToken returns the last position of a token that check accepts.
func unpackToken(token string, check func(last []byte) uint64) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 1+1+8 || b[0] != tokenVersion {
		return nil, fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
	}
	last := b[1 : len(b)-8]
	if binary.BigEndian.Uint64(b[len(b)-8:]) != check(last) {
		return nil, fmt.Errorf("%w: page token is damaged or was issued for different filters", persistence.ErrInvalid)
	}
	return last, nil
}

func encodeToken(q *persistence.Query, lastID string) string {
	return packToken([]byte(lastID), tokenCheck(q, lastID))
}

// decodeToken returns the id after which q's page starts, "" for the first
// page.
func decodeToken(q *persistence.Query) (string, error) {
	if q.PageToken == "" {
		return "", nil
	}
	last, err := unpackToken(q.PageToken, func(last []byte) uint64 { return tokenCheck(q, string(last)) })
	if err != nil {
		return "", err
	}
	return string(last), nil
}

func encodeTaskToken(q *persistence.TaskQuery, last []byte) string {
	return packToken(last, taskTokenCheck(q, last))
}

// decodeTaskToken returns the order key after which q's page starts, nil
// for the first page.
func decodeTaskToken(q *persistence.TaskQuery) ([]byte, error) {
	if q.PageToken == "" {
		return nil, nil
	}
	last, err := unpackToken(q.PageToken, func(last []byte) uint64 { return taskTokenCheck(q, last) })
	if err != nil {
		return nil, err
	}
	if _, ok := taskOrderID(last); !ok {
		return nil, fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
	}
	return last, nil
}

// taskTokenCheck hashes a task listing's filters; the leading "tasks" tag
// keeps its tokens apart from ListHandlers tokens.
func taskTokenCheck(q *persistence.TaskQuery, last []byte) uint64 {
	b := []byte("tasks\x00")
	statuses := slices.Clone(q.Statuses)
	slices.Sort(statuses)
	for _, s := range slices.Compact(statuses) {
		b = append(b, byte(s))
	}
	for _, s := range []string{q.Assignee, q.Workflow, q.HandlerID} {
		b = append(b, 0)
		b = append(b, s...)
	}
	b = append(b, 0)
	b = append(b, last...)
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

func tokenCheck(q *persistence.Query, lastID string) uint64 {
	var b []byte
	b = append(b, q.Workflow...)
	b = append(b, 0)
	statuses := slices.Clone(q.Statuses)
	slices.Sort(statuses)
	for _, s := range slices.Compact(statuses) {
		b = append(b, byte(s))
	}
	b = append(b, 0)
	if _, idle := q.IdleCutoff(); idle {
		b = append(b, 1)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(q.IdleFor))
	b = append(b, byte(q.Residency), 0)
	b = append(b, lastID...)
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}
