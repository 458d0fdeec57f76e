package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/wfd-dev/wfd/persistence"
	"github.com/wfd-dev/wfd/persistence/internal/codec"
)

// GetHandler returns a handler's metadata.
func (s *Store) GetHandler(ctx context.Context, id string) (persistence.Handler, error) {
	var h persistence.Handler
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		h, err = getHandler(tx, id)
		return err
	})
	if err != nil {
		return persistence.Handler{}, fmt.Errorf("bolt: get handler: %w", err)
	}
	return h, nil
}

func getHandler(tx *bolt.Tx, id string) (persistence.Handler, error) {
	b := bucket(tx, bucketHandlers)
	if !has(b, []byte(id)) {
		return persistence.Handler{}, fmt.Errorf("handler %q: %w", id, persistence.ErrNotFound)
	}
	return codec.DecodeStoredHandler(id, b.Get([]byte(id)))
}

// LoadHandler returns a handler's metadata and latest snapshot, read in
// one transaction.
func (s *Store) LoadHandler(ctx context.Context, id string) (persistence.Handler, []byte, error) {
	var (
		h    persistence.Handler
		snap []byte
	)
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		if h, err = getHandler(tx, id); err != nil {
			return err
		}
		snap = getSnapshot(tx, id)
		return nil
	})
	if err != nil {
		return persistence.Handler{}, nil, fmt.Errorf("bolt: load handler: %w", err)
	}
	return h, snap, nil
}

// LoadSnapshot returns a handler's latest snapshot, or nil if it has none.
func (s *Store) LoadSnapshot(ctx context.Context, id string) ([]byte, error) {
	var snap []byte
	err := s.view(ctx, func(tx *bolt.Tx) error {
		if !has(bucket(tx, bucketHandlers), []byte(id)) {
			return fmt.Errorf("handler %q: %w", id, persistence.ErrNotFound)
		}
		snap = getSnapshot(tx, id)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: load snapshot: %w", err)
	}
	return snap, nil
}

// getSnapshot returns a copy of handler id's snapshot, nil if it has none:
// a value points into the memory map, valid only inside the transaction.
// A stored empty snapshot is returned as empty, not nil.
func getSnapshot(tx *bolt.Tx, id string) []byte {
	k, v := bucket(tx, bucketSnapshots).Cursor().Seek([]byte(id))
	if k == nil || string(k) != id {
		return nil
	}
	return append([]byte{}, v...)
}

// ReadRecords returns up to limit records of a handler's stream after
// afterSeq.
func (s *Store) ReadRecords(ctx context.Context, id string, afterSeq uint64, limit int) ([]persistence.Record, error) {
	if limit <= 0 {
		limit = persistence.DefaultRecordLimit
	}
	var recs []persistence.Record
	err := s.view(ctx, func(tx *bolt.Tx) error {
		if !has(bucket(tx, bucketHandlers), []byte(id)) {
			return fmt.Errorf("handler %q: %w", id, persistence.ErrNotFound)
		}
		if afterSeq == ^uint64(0) {
			return nil
		}
		prefix := recordPrefix(id)
		c := bucket(tx, bucketRecords).Cursor()
		for k, v := c.Seek(recordKey(id, afterSeq+1)); k != nil && bytes.HasPrefix(k, prefix) && len(recs) < limit; k, v = c.Next() {
			if len(k) != len(prefix)+8 {
				return fmt.Errorf("handler %q: %w: record key of %d bytes", id, persistence.ErrCorrupt, len(k))
			}
			recs = append(recs, persistence.Record{
				Seq:  binary.BigEndian.Uint64(k[len(prefix):]),
				Data: bytes.Clone(v),
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: read records: %w", err)
	}
	return recs, nil
}
