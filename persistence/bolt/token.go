package bolt

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/wfd-dev/wfd/persistence"
)

// A page token is base64url(version | last id | check), where check is a
// hash of the query's filters and the last id. The last id is where the
// next page continues (exclusive), which stays correct when handlers are
// added or deleted between pages. The check makes a token that was damaged,
// or used with different filters, fail instead of silently listing the
// wrong handlers. Query.Now is not covered, so "idle for 1h" pages relative
// to the time of each request.
const tokenVersion = 1

func encodeToken(q *persistence.Query, lastID string) string {
	b := make([]byte, 0, 1+len(lastID)+8)
	b = append(b, tokenVersion)
	b = append(b, lastID...)
	b = binary.BigEndian.AppendUint64(b, tokenCheck(q, lastID))
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeToken returns the id after which q's page starts, "" for the first
// page.
func decodeToken(q *persistence.Query) (string, error) {
	if q.PageToken == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(q.PageToken)
	if err != nil || len(b) < 1+1+8 || b[0] != tokenVersion {
		return "", fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
	}
	lastID := string(b[1 : len(b)-8])
	if binary.BigEndian.Uint64(b[len(b)-8:]) != tokenCheck(q, lastID) {
		return "", fmt.Errorf("%w: page token is damaged or was issued for different filters", persistence.ErrInvalid)
	}
	return lastID, nil
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
