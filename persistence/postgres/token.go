package postgres

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// A page token is base64url(kind | position | check): kind tells the
// listings apart, position is where the previous page ended (the last
// entry's time and id, or time and seq), exclusive, and check is an FNV
// hash of the kind, the listing's filters and the position, so a damaged
// token, or one used with other filters or by another listing, fails with
// ErrInvalid instead of listing the wrong entries. Query.Now is not
// covered: "idle for 1h" pages relative to each request's time.
const (
	tokenHandlers  byte = 'h'
	tokenTasks     byte = 't'
	tokenPublished byte = 'p'
)

// position is where a listing page ended: a time and an id (handlers,
// tasks) or a time and a sequence number (the published log).
type position struct {
	at  time.Time
	id  string
	seq int64
}

func (p position) encode(kind byte) []byte {
	b := []byte{kind}
	b = binary.BigEndian.AppendUint64(b, uint64(p.at.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(p.at.Nanosecond()))
	if kind == tokenPublished {
		return binary.BigEndian.AppendUint64(b, uint64(p.seq))
	}
	return append(b, p.id...)
}

func packToken(kind byte, p position, filters []byte) string {
	b := p.encode(kind)
	return base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(b, tokenCheck(b, filters)))
}

func tokenCheck(payload, filters []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(payload)
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(filters)
	return h.Sum64()
}

// unpackToken returns the position of a token of kind issued for filters.
func unpackToken(token string, kind byte, filters []byte) (position, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 1+12+8 {
		return position{}, fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
	}
	payload, check := b[:len(b)-8], binary.BigEndian.Uint64(b[len(b)-8:])
	if payload[0] != kind {
		return position{}, fmt.Errorf("%w: page token was issued by another listing: list again from the first page", persistence.ErrInvalid)
	}
	if check != tokenCheck(payload, filters) {
		return position{}, fmt.Errorf("%w: page token is damaged or was issued for different filters", persistence.ErrInvalid)
	}
	rest := payload[13:]
	p := position{at: time.Unix(int64(binary.BigEndian.Uint64(payload[1:])), int64(binary.BigEndian.Uint32(payload[9:]))).UTC()}
	if kind == tokenPublished {
		if len(rest) != 8 {
			return position{}, fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
		}
		p.seq = int64(binary.BigEndian.Uint64(rest))
	} else {
		p.id = string(rest)
	}
	return p, nil
}

// handlerFilters encodes what a handler listing's token is bound to.
func handlerFilters(q *persistence.Query) []byte {
	b := append([]byte(q.Workflow), 0)
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
	return append(b, byte(q.Residency))
}

// taskFilters encodes what a task listing's token is bound to.
func taskFilters(q *persistence.TaskQuery) []byte {
	var b []byte
	statuses := slices.Clone(q.Statuses)
	slices.Sort(statuses)
	for _, s := range slices.Compact(statuses) {
		b = append(b, byte(s))
	}
	for _, s := range []string{q.Assignee, q.Workflow, q.HandlerID} {
		b = append(b, 0)
		b = append(b, s...)
	}
	assignees := slices.Clone(q.Assignees)
	slices.Sort(assignees)
	for _, a := range slices.Compact(assignees) {
		b = append(b, 1)
		b = append(b, a...)
	}
	return b
}

// publishedFilters encodes what a log listing's token is bound to.
func publishedFilters(q *persistence.PublishedQuery) []byte {
	b := append([]byte(q.Key), 0)
	b = append(b, q.HandlerID...)
	b = append(b, 0)
	if !q.Since.IsZero() {
		b = binary.BigEndian.AppendUint64(b, uint64(q.Since.Unix()))
		b = binary.BigEndian.AppendUint32(b, uint32(q.Since.Nanosecond()))
	}
	return b
}
