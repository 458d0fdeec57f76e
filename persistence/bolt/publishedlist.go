package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
)

// The published-event log is listed latest first through three indexes
// whose keys end in time(at)|seq: idx_published_time (the whole log),
// idx_published_by_key (key|0|time|seq) and idx_published_handler
// (handler|0|time|seq, entries addressed to one handler). A key and a
// handler together use idx_published_key (key|0|handler|0|time|seq),
// which FindPublished reads oldest first. A listing is one reverse range
// scan of one index that stops at Since, so one key's latest entries cost
// what is returned, never the size of the log.

// publishedTimeSeqLen is the size of the time|seq tail of those keys.
const publishedTimeSeqLen = timeLen + 8

// publishedTokenVersion tags ListPublished page tokens (see token.go).
const publishedTokenVersion = 3

// putPublishedListEntries adds p's entries to the listing indexes.
func putPublishedListEntries(tx *bolt.Tx, p *persistence.Published) error {
	tail := binary.BigEndian.AppendUint64(appendTime(make([]byte, 0, publishedTimeSeqLen), p.At), p.Seq)
	if err := bucket(tx, bucketPublishedTime).Put(tail, []byte{}); err != nil {
		return fmt.Errorf("put time entry: %w", err)
	}
	if err := bucket(tx, bucketPublishedByKey).Put(append(prefix0(p.Key), tail...), []byte{}); err != nil {
		return fmt.Errorf("put key listing entry: %w", err)
	}
	if p.HandlerID != "" {
		if err := bucket(tx, bucketPublishedHandler).Put(append(prefix0(p.HandlerID), tail...), []byte{}); err != nil {
			return fmt.Errorf("put handler entry: %w", err)
		}
	}
	return nil
}

// prefix0 is s|0.
func prefix0(s string) []byte {
	return append(append(make([]byte, 0, len(s)+1+publishedTimeSeqLen), s...), 0)
}

// publishedListScope returns the index and key prefix that answer q.
func publishedListScope(q *persistence.PublishedQuery) (name string, prefix []byte) {
	switch {
	case q.Key != "" && q.HandlerID != "":
		return bucketPublishedKey, publishedKeyPrefix(q.Key, q.HandlerID)
	case q.Key != "":
		return bucketPublishedByKey, prefix0(q.Key)
	case q.HandlerID != "":
		return bucketPublishedHandler, prefix0(q.HandlerID)
	default:
		return bucketPublishedTime, nil
	}
}

// ListPublished lists the published-event log latest first.
func (s *Store) ListPublished(ctx context.Context, q persistence.PublishedQuery) ([]persistence.Published, string, error) {
	if err := q.Validate(); err != nil {
		return nil, "", fmt.Errorf("bolt: list published: %w", err)
	}
	after, err := decodePublishedToken(&q)
	if err != nil {
		return nil, "", fmt.Errorf("bolt: list published: %w", err)
	}
	limit := q.Limit()
	name, prefix := publishedListScope(&q)
	var since []byte
	if !q.Since.IsZero() {
		since = appendTime(nil, q.Since)
	}
	var (
		out    backend.Listing[persistence.Published]
		last   []byte // time|seq of the last entry looked at
		more   bool
		listed int // entries returned or skipped as corrupt
	)
	err = s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, name).Cursor()
		var k []byte
		if after != nil {
			// Continue with the last entry before the previous page's
			// last one: Seek finds the first key at or after it.
			if k, _ = c.Seek(append(bytes.Clone(prefix), after...)); k == nil {
				k, _ = c.Last()
			} else {
				k, _ = c.Prev()
			}
		} else {
			k = seekLastWithPrefix(c, prefix)
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			tail := k[len(prefix):]
			if len(tail) != publishedTimeSeqLen {
				// Damage (keys and ids hold no 0 byte, so no other
				// entry shares the prefix): skip it.
				out.Skip(fmt.Errorf("%w: %s entry %q", persistence.ErrCorrupt, name, k))
				continue
			}
			if since != nil && bytes.Compare(tail[:timeLen], since) < 0 {
				break
			}
			if listed >= limit {
				more = true
				break
			}
			listed++
			last = bytes.Clone(tail)
			out.Add(getPublished(tx, binary.BigEndian.Uint64(tail[timeLen:])))
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("bolt: list published: %w", err)
	}
	var next string
	if more && last != nil {
		next = packToken(publishedTokenVersion, last, publishedTokenCheck(&q))
	}
	if err := out.Err("entries"); err != nil {
		return out.Items, next, fmt.Errorf("bolt: list published: %w", err)
	}
	return out.Items, next, nil
}

// seekLastWithPrefix positions c on the last key with prefix (nil if none).
func seekLastWithPrefix(c *bolt.Cursor, prefix []byte) []byte {
	if len(prefix) == 0 {
		k, _ := c.Last()
		return k
	}
	// prefix ends in a 0 byte; prefix with its last byte 1 sorts after
	// every key that has prefix.
	end := bytes.Clone(prefix)
	end[len(end)-1] = 1
	k, _ := c.Seek(end)
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	return k
}

// decodePublishedToken returns time|seq after which q's page starts (in
// listing order: before it in time), nil for the first page.
func decodePublishedToken(q *persistence.PublishedQuery) ([]byte, error) {
	if q.PageToken == "" {
		return nil, nil
	}
	b, err := unpackRawToken(q.PageToken, publishedTokenVersion, publishedTokenCheck(q))
	if err != nil {
		return nil, err
	}
	if _, ok := parseTime(b); !ok || len(b) != publishedTimeSeqLen {
		return nil, fmt.Errorf("%w: malformed page token", persistence.ErrInvalid)
	}
	return b, nil
}
