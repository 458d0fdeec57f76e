package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/backend"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// Publish appends p to the published-event log in its own commit, which it
// shares with concurrent Writes and Publishes through the group commit.
// The sequence number comes from the log bucket's own sequence
// (Bucket.NextSequence), which rolls back with a failed transaction, so
// Seqs increase in commit order.
func (s *Store) Publish(ctx context.Context, p persistence.Published) (persistence.Published, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.Published{}, err
	}
	p, err := backend.PreparePublished(p)
	if err != nil {
		return persistence.Published{}, fmt.Errorf("bolt: %w", err)
	}
	var out persistence.Published
	err = s.update(func(tx *bolt.Tx) error {
		var err error
		out, err = publish(tx, p)
		return err
	})
	if err != nil {
		return persistence.Published{}, fmt.Errorf("bolt: publish %q: %w", p.ID, storageError(err))
	}
	return out, nil
}

// publish appends p unless its id is taken, and returns the stored entry.
// It derives everything from tx, as update requires.
func publish(tx *bolt.Tx, p persistence.Published) (persistence.Published, error) {
	ids := bucket(tx, bucketPublishedID)
	if v := ids.Get([]byte(p.ID)); v != nil {
		// Published before: return that entry, unchanged.
		if len(v) != 8 {
			return persistence.Published{}, fmt.Errorf("%w: published id %q: seq of %d bytes", persistence.ErrCorrupt, p.ID, len(v))
		}
		first, err := getPublished(tx, binary.BigEndian.Uint64(v))
		if err != nil {
			return persistence.Published{}, err
		}
		if first.ID != p.ID {
			return persistence.Published{}, fmt.Errorf("%w: published id %q points at entry %d of %q", persistence.ErrCorrupt, p.ID, first.Seq, first.ID)
		}
		return first, nil
	}
	log := bucket(tx, bucketPublished)
	seq, err := log.NextSequence()
	if err != nil {
		return persistence.Published{}, fmt.Errorf("next seq: %w", err)
	}
	p.Seq = seq
	enc, err := codec.EncodePublished(&p)
	if err != nil {
		return persistence.Published{}, err
	}
	if err := log.Put(seqKey(seq), enc); err != nil {
		return persistence.Published{}, fmt.Errorf("put entry %d: %w", seq, err)
	}
	if err := ids.Put([]byte(p.ID), seqKey(seq)); err != nil {
		return persistence.Published{}, fmt.Errorf("put id entry: %w", err)
	}
	if err := bucket(tx, bucketPublishedKey).Put(publishedKeyKey(p.Key, p.HandlerID, p.At, seq), []byte{}); err != nil {
		return persistence.Published{}, fmt.Errorf("put key entry: %w", err)
	}
	if err := putPublishedListEntries(tx, &p); err != nil {
		return persistence.Published{}, err
	}
	// The caller gets its own copy of Data: p.Data stays with this
	// function, which may run again.
	p.Data = bytes.Clone(p.Data)
	return p, nil
}

// getPublished returns the log entry seq.
func getPublished(tx *bolt.Tx, seq uint64) (persistence.Published, error) {
	v := bucket(tx, bucketPublished).Get(seqKey(seq))
	if v == nil {
		// Entries are never empty; only an index points at missing ones.
		return persistence.Published{}, fmt.Errorf("%w: index entry for missing published entry %d", persistence.ErrCorrupt, seq)
	}
	return codec.DecodeStoredPublished(seq, v)
}

// FindPublished returns the oldest matching entry. idx_published_key holds
// key|0|addressee|0|time|seq, so the oldest entry at or after since for one
// addressee is the first key at or after key|0|addressee|0|time(since):
// one seek for the handler, one for global entries, and the older of the
// two wins.
func (s *Store) FindPublished(ctx context.Context, key, handlerID string, since time.Time) (persistence.Published, bool, error) {
	if err := persistence.ValidatePublishedFilter(key, handlerID); err != nil {
		return persistence.Published{}, false, fmt.Errorf("bolt: find published: %w", err)
	}
	var (
		p     persistence.Published
		found bool
	)
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, bucketPublishedKey).Cursor()
		best, err := firstPublished(c, key, "", since)
		if err != nil {
			return err
		}
		if handlerID != "" {
			mine, err := firstPublished(c, key, handlerID, since)
			if err != nil {
				return err
			}
			// time|seq keys compare as (At, Seq).
			if best == nil || (mine != nil && bytes.Compare(mine, best) < 0) {
				best = mine
			}
		}
		if best == nil {
			return nil
		}
		p, err = getPublished(tx, binary.BigEndian.Uint64(best[timeLen:]))
		found = err == nil
		return err
	})
	if err != nil {
		return persistence.Published{}, false, fmt.Errorf("bolt: find published %q: %w", key, err)
	}
	return p, found, nil
}

// firstPublished returns time|seq of the oldest entry for key and
// addressee at or after since, or nil.
func firstPublished(c *bolt.Cursor, key, addressee string, since time.Time) ([]byte, error) {
	prefix := publishedKeyPrefix(key, addressee)
	k, _ := c.Seek(appendTime(prefix, since))
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return nil, nil
	}
	rest := k[len(prefix):]
	if _, ok := parseTime(rest); !ok || len(rest) != timeLen+8 {
		return nil, fmt.Errorf("%w: published key entry %q", persistence.ErrCorrupt, k)
	}
	return rest, nil
}

// PublishedAfter returns up to limit log entries after afterSeq, in order.
func (s *Store) PublishedAfter(ctx context.Context, afterSeq uint64, limit int) ([]persistence.Published, error) {
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	var out backend.Listing[persistence.Published]
	err := s.view(ctx, func(tx *bolt.Tx) error {
		if afterSeq == ^uint64(0) {
			return nil
		}
		c := bucket(tx, bucketPublished).Cursor()
		for k, v := c.Seek(seqKey(afterSeq + 1)); k != nil && len(out.Items) < limit; k, v = c.Next() {
			if len(k) != 8 {
				out.Skip(fmt.Errorf("%w: published key of %d bytes", persistence.ErrCorrupt, len(k)))
				continue
			}
			out.Add(codec.DecodeStoredPublished(binary.BigEndian.Uint64(k), v)) // decoding copied Data out of the map
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: published after %d: %w", afterSeq, err)
	}
	if err := out.Err("entries"); err != nil {
		return out.Items, fmt.Errorf("bolt: published after %d: %w", afterSeq, err)
	}
	return out.Items, nil
}
