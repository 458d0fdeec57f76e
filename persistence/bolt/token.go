package bolt

import (
	"fmt"
	"slices"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/pagetoken"
)

// A page token (persistence/internal/pagetoken) has the payload
// version | last position, and its check hashes the listing's tag (none
// for handlers), its filters and the last position. The last position
// (the order key time|id of the last handler or task listed) is where the
// next page continues (exclusive), which stays correct when entries are
// added or deleted between pages.
//
// ListHandlers tokens are version 2: version 1 carried a handler id, when
// handlers were listed in id order (schema 2 and older); such a token is
// refused, and the client lists again from the first page. ListPublished
// tokens are version 3 (publishedlist.go); their position is time(at)|seq.
const (
	taskTokenVersion    = 1
	handlerTokenVersion = 2
)

// tokenCheck returns a listing's check of a last position: the hash of
// parts (the listing's tag and filters) and last.
func tokenCheck(parts ...[]byte) func(last []byte) uint64 {
	return func(last []byte) uint64 { return pagetoken.Check(append(slices.Clip(parts), last)...) }
}

func packToken(version byte, last []byte, check func(last []byte) uint64) string {
	return pagetoken.Seal(append([]byte{version}, last...), check(last))
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
	payload, err := pagetoken.Open(token, version, 2, func(p []byte) uint64 { return check(p[1:]) })
	if err != nil {
		return nil, err
	}
	return payload[1:], nil
}

func handlerTokenCheck(q *persistence.Query) func(last []byte) uint64 {
	return tokenCheck(pagetoken.HandlerFilters(q))
}

// taskTokenCheck's leading "tasks" tag keeps its tokens apart from
// ListHandlers tokens.
func taskTokenCheck(q *persistence.TaskQuery) func(last []byte) uint64 {
	return tokenCheck([]byte("tasks"), pagetoken.TaskFilters(q))
}

// publishedTokenCheck's leading tag keeps its tokens apart from the
// other listings'.
func publishedTokenCheck(q *persistence.PublishedQuery) func(last []byte) uint64 {
	return tokenCheck([]byte("published"), pagetoken.PublishedFilters(q, appendTime))
}
