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
// last position (the order key time|id of the last handler or task listed)
// is where the next page continues (exclusive), which stays correct when
// entries are added or deleted between pages. The check makes
// a token that was damaged, used with different filters or with the other
// listing fail instead of silently listing the wrong entries. Query.Now is
// not covered, so "idle for 1h" pages relative to the time of each request.
//
// ListHandlers tokens are version 2: version 1 carried a handler id, when
// handlers were listed in id order (schema 2 and older); such a token is
// refused, and the client lists again from the first page. ListPublished
// tokens are version 3 (publishedlist.go); their position is time(at)|seq.
const (
	taskTokenVersion    = 1
	handlerTokenVersion = 2
)

func packToken(version byte, last []byte, check uint64) string {
	b := make([]byte, 0, 1+len(last)+8)
	b = append(b, version)
	b = append(b, last...)
	b = binary.BigEndian.AppendUint64(b, check)
	return base64.RawURLEncoding.EncodeToString(b)
}

// unpackToken returns the last position of a version token that check
// accepts, if it holds an order key.
func unpackToken(token string, version byte, check func(last []byte) uint64) ([]byte, error) {
	last, err := unpackRawToken(token, version, check)
	if err != nil {
		return nil, err
	}
	if _, ok := orderKeyID(last); !ok {
		return nil, fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
	}
	return last, nil
}

// unpackRawToken returns the last position of a version token that check
// accepts, whatever it holds.
func unpackRawToken(token string, version byte, check func(last []byte) uint64) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 1+1+8 {
		return nil, fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
	}
	if b[0] != version {
		return nil, fmt.Errorf("%w: page token was issued by another listing or an older wfd: list again from the first page", persistence.ErrInvalid)
	}
	last := b[1 : len(b)-8]
	if binary.BigEndian.Uint64(b[len(b)-8:]) != check(last) {
		return nil, fmt.Errorf("%w: page token is damaged or was issued for different filters", persistence.ErrInvalid)
	}
	return last, nil
}

func encodeToken(q *persistence.Query, last []byte) string {
	return packToken(handlerTokenVersion, last, tokenCheck(q, last))
}

// decodeToken returns the order key after which q's page starts, nil for
// the first page.
func decodeToken(q *persistence.Query) ([]byte, error) {
	if q.PageToken == "" {
		return nil, nil
	}
	return unpackToken(q.PageToken, handlerTokenVersion, func(last []byte) uint64 { return tokenCheck(q, last) })
}

func encodeTaskToken(q *persistence.TaskQuery, last []byte) string {
	return packToken(taskTokenVersion, last, taskTokenCheck(q, last))
}

// decodeTaskToken returns the order key after which q's page starts, nil
// for the first page.
func decodeTaskToken(q *persistence.TaskQuery) ([]byte, error) {
	if q.PageToken == "" {
		return nil, nil
	}
	return unpackToken(q.PageToken, taskTokenVersion, func(last []byte) uint64 { return taskTokenCheck(q, last) })
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
	if len(q.Assignees) > 0 {
		assignees := slices.Clone(q.Assignees)
		slices.Sort(assignees)
		for _, a := range slices.Compact(assignees) {
			b = append(b, 1)
			b = append(b, a...)
		}
	}
	b = append(b, 0)
	b = append(b, last...)
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

func tokenCheck(q *persistence.Query, last []byte) uint64 {
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
	b = append(b, last...)
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}
