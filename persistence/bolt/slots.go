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
)

// Concurrency keys live in four buckets, keyed by k = workflow|0|key (a
// key has no NUL: SlotKey.Validate):
//
//	slot_keys     k → the header (backend.EncodeSlotHeader)
//	slot_entries  k|0|'h'|seq → time|id: the holders, in admission order
//	              k|0|'q'|seq → time|id: the queue, in order
//	slot_ids      k|0|id → 'h'|seq or 'q'|seq
//	idx_slot_due  time(NextDue)|k → "": keys the rate holds back
//	idx_slot_pending  time(admitted)|k|0|id → "": holders not yet told
//
// UpdateSlots runs in the group commit like any write, so bbolt's single
// writer serialises the changes of a key.

const seqLen = 8

func slotKeyBytes(k persistence.SlotKey) []byte {
	b := make([]byte, 0, len(k.Workflow)+1+len(k.Key))
	b = append(b, k.Workflow...)
	b = append(b, 0)
	return append(b, k.Key...)
}

func parseSlotKey(b []byte) (persistence.SlotKey, bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return persistence.SlotKey{}, false
	}
	return persistence.SlotKey{Workflow: string(b[:i]), Key: string(b[i+1:])}, true
}

// slotRows are a key's entries in a transaction (backend.SlotRows).
type slotRows struct {
	tx *bolt.Tx
	k  []byte // slotKeyBytes|0
}

func (r slotRows) entryKey(kind byte, seq uint64) []byte {
	b := append(append([]byte(nil), r.k...), kind)
	return binary.BigEndian.AppendUint64(b, seq)
}

func (r slotRows) idKey(id string) []byte { return append(append([]byte(nil), r.k...), id...) }

func (r slotRows) Find(id string) (holding bool, seq uint64, found bool, err error) {
	v := bucket(r.tx, bucketSlotIDs).Get(r.idKey(id))
	if v == nil {
		return false, 0, false, nil
	}
	if len(v) != 1+seqLen || (v[0] != 'h' && v[0] != 'q') {
		return false, 0, false, fmt.Errorf("%w: concurrency entry of %q", persistence.ErrCorrupt, id)
	}
	return v[0] == 'h', binary.BigEndian.Uint64(v[1:]), true, nil
}

func (r slotRows) put(kind byte, id string, seq uint64, at time.Time) error {
	v := append(appendTime(make([]byte, 0, timeLen+len(id)), at), id...)
	if err := bucket(r.tx, bucketSlotEntries).Put(r.entryKey(kind, seq), v); err != nil {
		return err
	}
	return bucket(r.tx, bucketSlotIDs).Put(r.idKey(id), binary.BigEndian.AppendUint64([]byte{kind}, seq))
}

func (r slotRows) Insert(id string, seq uint64, at time.Time, holding bool) error {
	if holding {
		return r.put('h', id, seq, at)
	}
	return r.put('q', id, seq, at)
}

func (r slotRows) Delete(id string, holding bool, seq uint64) error {
	kind := byte('q')
	if holding {
		kind = 'h'
		if err := r.undeliver(id, seq); err != nil {
			return err
		}
	}
	if err := bucket(r.tx, bucketSlotEntries).Delete(r.entryKey(kind, seq)); err != nil {
		return err
	}
	return bucket(r.tx, bucketSlotIDs).Delete(r.idKey(id))
}

func (r slotRows) Head() (string, uint64, bool, error) {
	prefix := append(append([]byte(nil), r.k...), 'q')
	k, v := bucket(r.tx, bucketSlotEntries).Cursor().Seek(prefix)
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return "", 0, false, nil
	}
	if len(k) != len(prefix)+seqLen || len(v) < timeLen {
		return "", 0, false, fmt.Errorf("%w: concurrency queue entry %q", persistence.ErrCorrupt, k)
	}
	return string(v[timeLen:]), binary.BigEndian.Uint64(k[len(prefix):]), true, nil
}

func (r slotRows) Admit(id string, seq uint64, at time.Time) error {
	if err := bucket(r.tx, bucketSlotEntries).Delete(r.entryKey('q', seq)); err != nil {
		return err
	}
	if err := r.put('h', id, seq, at); err != nil {
		return err
	}
	return bucket(r.tx, bucketSlotPending).Put(r.pendingKey(at, id), nil)
}

func (r slotRows) pendingKey(at time.Time, id string) []byte {
	return append(append(appendTime(make([]byte, 0, timeLen+len(r.k)+len(id)), at), r.k...), id...)
}

// holderAt returns when the holder under seq was admitted.
func (r slotRows) holderAt(seq uint64) (time.Time, bool) {
	return parseTime(bucket(r.tx, bucketSlotEntries).Get(r.entryKey('h', seq)))
}

func (r slotRows) Deliver(id string) error {
	holding, seq, found, err := r.Find(id)
	if err != nil || !found || !holding {
		return err
	}
	return r.undeliver(id, seq)
}

// undeliver takes holder id (under seq) out of the pending index.
func (r slotRows) undeliver(id string, seq uint64) error {
	if at, ok := r.holderAt(seq); ok {
		return bucket(r.tx, bucketSlotPending).Delete(r.pendingKey(at, id))
	}
	return nil
}

func (r slotRows) Position(seq uint64) (int, error) {
	prefix := append(append([]byte(nil), r.k...), 'q')
	end := r.entryKey('q', seq)
	n := 1
	c := bucket(r.tx, bucketSlotEntries).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.Compare(k, end) < 0; k, _ = c.Next() {
		n++
	}
	return n, nil
}

// entries returns up to limit entries of kind, in order (limit < 0: all).
func (r slotRows) entries(kind byte, limit int) ([]persistence.SlotEntry, error) {
	prefix := append(append([]byte(nil), r.k...), kind)
	var out []persistence.SlotEntry
	c := bucket(r.tx, bucketSlotEntries).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && (limit < 0 || len(out) < limit); k, v = c.Next() {
		at, ok := parseTime(v)
		if !ok {
			return out, fmt.Errorf("%w: concurrency entry %q", persistence.ErrCorrupt, k)
		}
		e := persistence.SlotEntry{HandlerID: string(v[timeLen:]), At: at}
		e.Pending = kind == 'h' && bucket(r.tx, bucketSlotPending).Get(r.pendingKey(at, e.HandlerID)) != nil
		out = append(out, e)
	}
	return out, nil
}

func checkSlotKey(k persistence.SlotKey) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if bytes.IndexByte([]byte(k.Workflow), 0) >= 0 || bytes.IndexByte([]byte(k.Key), 0) >= 0 {
		return fmt.Errorf("%w: concurrency key %s: a NUL", persistence.ErrInvalid, k)
	}
	return nil
}

// UpdateSlots applies c to key k (persistence.Slots).
func (s *Store) UpdateSlots(ctx context.Context, k persistence.SlotKey, c persistence.SlotChange) (persistence.SlotResult, error) {
	if err := s.begin(ctx); err != nil {
		return persistence.SlotResult{}, err
	}
	if err := checkSlotKey(k); err != nil {
		return persistence.SlotResult{}, fmt.Errorf("bolt: %w", err)
	}
	kb := slotKeyBytes(k)
	var res persistence.SlotResult
	err := s.update(func(tx *bolt.Tx) error {
		keys := bucket(tx, bucketSlotKeys)
		var h backend.SlotHeader
		if v := keys.Get(kb); v != nil {
			var err error
			if h, err = backend.DecodeSlotHeader(v); err != nil {
				return err
			}
		}
		oldDue := h.NextDue
		var err error
		res, err = backend.ApplySlots(&h, slotRows{tx: tx, k: append(append([]byte(nil), kb...), 0)}, c)
		if err != nil {
			return err
		}
		due := bucket(tx, bucketSlotDue)
		if !oldDue.IsZero() && !oldDue.Equal(h.NextDue) {
			if err := due.Delete(append(appendTime(nil, oldDue), kb...)); err != nil {
				return err
			}
		}
		if !h.NextDue.IsZero() {
			if err := due.Put(append(appendTime(nil, h.NextDue), kb...), nil); err != nil {
				return err
			}
		}
		if h.Holding == 0 && h.Queued == 0 && h.NextDue.IsZero() && len(h.Window) == 0 {
			return keys.Delete(kb)
		}
		return keys.Put(kb, backend.EncodeSlotHeader(&h))
	})
	if err != nil {
		return persistence.SlotResult{}, fmt.Errorf("bolt: concurrency key %s: %w", k, storageError(err))
	}
	return res, nil
}

// SlotOf returns where handler id stands in key k (persistence.Slots).
func (s *Store) SlotOf(ctx context.Context, k persistence.SlotKey, id string) (int, error) {
	if err := checkSlotKey(k); err != nil {
		return 0, fmt.Errorf("bolt: %w", err)
	}
	pos := 0
	err := s.view(ctx, func(tx *bolt.Tx) error {
		r := slotRows{tx: tx, k: append(slotKeyBytes(k), 0)}
		holding, seq, found, err := r.Find(id)
		switch {
		case err != nil:
			return err
		case !found:
			return fmt.Errorf("handler %q: %w", id, persistence.ErrNotFound)
		case !holding:
			pos, err = r.Position(seq)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("bolt: concurrency key %s: %w", k, err)
	}
	return pos, nil
}

// ListSlots returns key k's holders and the head of its queue
// (persistence.Slots).
func (s *Store) ListSlots(ctx context.Context, k persistence.SlotKey, limit int) (holders, queue []persistence.SlotEntry, err error) {
	if err := checkSlotKey(k); err != nil {
		return nil, nil, fmt.Errorf("bolt: %w", err)
	}
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	err = s.view(ctx, func(tx *bolt.Tx) error {
		r := slotRows{tx: tx, k: append(slotKeyBytes(k), 0)}
		var err error
		if holders, err = r.entries('h', -1); err != nil {
			return err
		}
		queue, err = r.entries('q', limit)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("bolt: concurrency key %s: %w", k, err)
	}
	return holders, queue, nil
}

// SlotKeys returns the keys after after, with their counts
// (persistence.Slots).
func (s *Store) SlotKeys(ctx context.Context, after persistence.SlotKey, limit int) ([]persistence.SlotKeyInfo, error) {
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	var out []persistence.SlotKeyInfo
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, bucketSlotKeys).Cursor()
		start := slotKeyBytes(after)
		k, v := c.First()
		if after != (persistence.SlotKey{}) {
			k, v = c.Seek(start)
			if bytes.Equal(k, start) {
				k, v = c.Next()
			}
		}
		for ; k != nil && len(out) < limit; k, v = c.Next() {
			sk, ok := parseSlotKey(k)
			h, err := backend.DecodeSlotHeader(v)
			if !ok || err != nil {
				return fmt.Errorf("%w: concurrency key %q", persistence.ErrCorrupt, k)
			}
			out = append(out, persistence.SlotKeyInfo{SlotKey: sk, Holding: h.Holding, Queued: h.Queued, NextDue: h.NextDue})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: concurrency keys: %w", err)
	}
	return out, nil
}

// DueSlots returns the keys the rate lets in by before (persistence.Slots).
func (s *Store) DueSlots(ctx context.Context, before time.Time, limit int) ([]persistence.SlotKey, error) {
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	end := appendTime(nil, before)
	var out []persistence.SlotKey
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, bucketSlotDue).Cursor()
		for k, _ := c.First(); k != nil && len(out) < limit; k, _ = c.Next() {
			if len(k) <= timeLen {
				return fmt.Errorf("%w: due concurrency key %q", persistence.ErrCorrupt, k)
			}
			if bytes.Compare(k[:timeLen], end) > 0 {
				break
			}
			sk, ok := parseSlotKey(k[timeLen:])
			if !ok {
				return fmt.Errorf("%w: due concurrency key %q", persistence.ErrCorrupt, k)
			}
			out = append(out, sk)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: due concurrency keys: %w", err)
	}
	return out, nil
}

// PendingSlots returns the holders not yet told (persistence.Slots).
func (s *Store) PendingSlots(ctx context.Context, limit int) ([]persistence.SlotPending, error) {
	if limit <= 0 {
		limit = persistence.DefaultScanLimit
	}
	var out []persistence.SlotPending
	err := s.view(ctx, func(tx *bolt.Tx) error {
		c := bucket(tx, bucketSlotPending).Cursor()
		for k, _ := c.First(); k != nil && len(out) < limit; k, _ = c.Next() {
			at, ok := parseTime(k)
			rest := k[min(len(k), timeLen):]
			i := bytes.IndexByte(rest, 0)
			j := -1
			if i >= 0 {
				j = bytes.IndexByte(rest[i+1:], 0)
			}
			if !ok || i < 0 || j < 0 {
				return fmt.Errorf("%w: pending concurrency entry %q", persistence.ErrCorrupt, k)
			}
			out = append(out, persistence.SlotPending{
				SlotKey:   persistence.SlotKey{Workflow: string(rest[:i]), Key: string(rest[i+1 : i+1+j])},
				SlotEntry: persistence.SlotEntry{HandlerID: string(rest[i+2+j:]), At: at, Pending: true},
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bolt: pending concurrency entries: %w", err)
	}
	return out, nil
}
