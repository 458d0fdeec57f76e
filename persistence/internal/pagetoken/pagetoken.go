// Package pagetoken is what the backends' page tokens share. A token is
// base64url(payload | check): the payload is where the previous page
// ended, in a form of the backend's own (with a leading byte that tells
// the listings apart), and check, 8 bytes, an FNV-1a hash of the
// position and of the listing's filters, so that a token that was
// damaged, or is used with other filters or by another listing, fails
// with ErrInvalid instead of listing the wrong entries. Query.Now is not
// covered, so "idle for 1h" pages relative to each request's time.
//
// The filters of each listing are encoded here, once; what a backend's
// position is, and which parts its check covers in which order, stays the
// backend's, so the tokens each one issued stay valid.
package pagetoken

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// checkLen is the size of a token's check.
const checkLen = 8

// Check hashes parts, with a 0 byte between each two.
func Check(parts ...[]byte) uint64 {
	h := fnv.New64a()
	for i, p := range parts {
		if i > 0 {
			_, _ = h.Write([]byte{0})
		}
		_, _ = h.Write(p)
	}
	return h.Sum64()
}

// Seal returns the token of payload and its check.
func Seal(payload []byte, check uint64) string {
	b := make([]byte, 0, len(payload)+checkLen)
	b = append(b, payload...)
	return base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(b, check))
}

// Open returns the payload of token if it has at least minPayload bytes,
// begins with tag, and check (of the payload, tag included) is the
// token's check. The error wraps ErrInvalid.
func Open(token string, tag byte, minPayload int, check func(payload []byte) uint64) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < max(minPayload, 1)+checkLen {
		return nil, fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
	}
	payload := b[:len(b)-checkLen]
	if payload[0] != tag {
		return nil, fmt.Errorf("%w: page token was issued by another listing or an older wfd: list again from the first page", persistence.ErrInvalid)
	}
	if binary.BigEndian.Uint64(b[len(b)-checkLen:]) != check(payload) {
		return nil, fmt.Errorf("%w: page token is damaged or was issued for different filters", persistence.ErrInvalid)
	}
	return payload, nil
}

// HandlerFilters encodes what a handler listing's token is bound to.
func HandlerFilters(q *persistence.Query) []byte {
	b := append([]byte(q.Workflow), 0)
	b = appendSet(b, q.Statuses)
	b = append(b, 0)
	if _, idle := q.IdleCutoff(); idle {
		b = append(b, 1)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(q.IdleFor))
	b = append(b, byte(q.Residency))
	if q.Version != "" {
		// Only when set, so that tokens issued before Query.Version
		// existed stay valid.
		b = append(b, 0)
		b = append(b, q.Version...)
	}
	if q.Where != nil {
		// Likewise only when set; its canonical form, after a 1.
		b = append(b, 1)
		b = append(b, q.Where.String()...)
	}
	return b
}

// TaskFilters encodes what a task listing's token is bound to.
func TaskFilters(q *persistence.TaskQuery) []byte {
	b := appendSet(nil, q.Statuses)
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
	// Only when set, so the tokens of listings without them stay as they
	// were.
	if q.Claim != persistence.ClaimAny {
		b = append(b, 2, byte(q.Claim))
	}
	if q.Overdue {
		b = append(b, 3)
	}
	return b
}

// PublishedFilters encodes what a log listing's token is bound to, with
// Since encoded by appendTime (the backend's encoding of times in its
// positions).
func PublishedFilters(q *persistence.PublishedQuery, appendTime func([]byte, time.Time) []byte) []byte {
	b := append([]byte(q.Key), 0)
	b = append(b, q.HandlerID...)
	b = append(b, 0)
	if !q.Since.IsZero() {
		b = appendTime(b, q.Since)
	}
	return b
}

// appendSet appends the statuses of a filter, sorted and each once, a byte
// each: the order and repetitions a caller lists them in do not change
// the listing.
func appendSet[S ~int](b []byte, set []S) []byte {
	sorted := slices.Clone(set)
	slices.Sort(sorted)
	for _, s := range slices.Compact(sorted) {
		b = append(b, byte(s))
	}
	return b
}
