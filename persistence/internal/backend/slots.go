package backend

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/wfd-dev/wfd/persistence"
)

// SlotHeader is what a backend keeps per concurrency key beside its
// entries: the counts, the next queue sequence number, and the admission
// times the rate limit still remembers (at most its Rate, oldest first).
type SlotHeader struct {
	Holding, Queued int
	NextSeq         uint64
	NextDue         time.Time
	Window          []time.Time
}

// SlotRows are a key's entries inside the backend's transaction.
type SlotRows interface {
	// Find returns where id is: holding, or queued with its seq.
	Find(id string) (holding bool, seq uint64, found bool, err error)
	// Insert adds id under seq: to the holders (admitted at once, not
	// pending), or to the queue.
	Insert(id string, seq uint64, at time.Time, holding bool) error
	// Delete removes id (holding, or queued under seq).
	Delete(id string, holding bool, seq uint64) error
	// Head returns the queue's first entry.
	Head() (id string, seq uint64, ok bool, err error)
	// Admit moves the queued id (under seq) to the holders, at at, as
	// pending.
	Admit(id string, seq uint64, at time.Time) error
	// Position counts the queued entries before seq, plus one.
	Position(seq uint64) (int, error)
	// Deliver marks the holder id as told (not pending); nothing if it is
	// not a pending holder.
	Deliver(id string) error
}

// ApplySlots applies c to a key whose header is h and whose entries are
// rows: the rules of persistence.Slots.UpdateSlots, once for every
// backend. It changes h; the backend writes it back (or deletes the key
// when both counts are zero).
func ApplySlots(h *SlotHeader, rows SlotRows, c persistence.SlotChange) (persistence.SlotResult, error) {
	var res persistence.SlotResult
	if err := c.Limit.Validate(); err != nil {
		return res, err
	}
	if err := release(h, rows, c.Release); err != nil {
		return res, err
	}
	queued, err := enqueue(h, rows, c, &res)
	if err != nil {
		return res, err
	}
	var admitted []string
	if !c.Hold {
		if admitted, err = admitHead(h, rows, c); err != nil {
			return res, err
		}
	}
	if queued {
		// Behind others, or the limit is reached: its place after the
		// admissions above, which took from the head before it.
		if res.Position, err = rows.Position(h.NextSeq); err != nil {
			return res, err
		}
	}
	if c.Delivered != "" {
		if err := rows.Deliver(c.Delivered); err != nil {
			return res, err
		}
	}
	res.Admitted = admitted
	if res.NextDue.IsZero() {
		res.NextDue = h.NextDue
	}
	res.Holding, res.Queued = h.Holding, h.Queued
	return res, nil
}

// release removes id (holding or queued), if it is there.
func release(h *SlotHeader, rows SlotRows, id string) error {
	if id == "" {
		return nil
	}
	holding, seq, found, err := rows.Find(id)
	if err != nil || !found {
		return err
	}
	if err := rows.Delete(id, holding, seq); err != nil {
		return err
	}
	if holding {
		h.Holding--
	} else {
		h.Queued--
	}
	return nil
}

// enqueue admits c.Enqueue at once when nobody waits and the limit lets it
// in (a holder its caller starts admitted: not pending), or adds it at the
// queue's tail (queued), or finds where it is already (res.Existed,
// res.Position), or refuses it (res.Refused).
func enqueue(h *SlotHeader, rows SlotRows, c persistence.SlotChange, res *persistence.SlotResult) (queued bool, err error) {
	if c.Enqueue == "" {
		return false, nil
	}
	holding, seq, found, err := rows.Find(c.Enqueue)
	switch {
	case err != nil:
		return false, err
	case found:
		res.Existed = true
		if !holding {
			res.Position, err = rows.Position(seq)
		}
		return false, err
	case c.Refuse && (h.Queued > 0 || !admits(h, c.Limit, c.Now)):
		res.Refused = true
		if c.Limit.Rate > 0 && len(h.Window) >= c.Limit.Rate {
			res.NextDue = h.Window[0].Add(c.Limit.Per) // when to try again
		}
		return false, nil
	}
	h.NextSeq++
	now := h.Queued == 0 && !c.Hold && admits(h, c.Limit, c.Now)
	if err := rows.Insert(c.Enqueue, h.NextSeq, c.Now, now); err != nil {
		return false, err
	}
	if now {
		take(h, c.Limit, c.Now)
		return false, nil
	}
	h.Queued++
	return true, nil
}

// take counts one more holder, and its admission against the rate.
func take(h *SlotHeader, l persistence.SlotLimit, now time.Time) {
	h.Holding++
	if l.Rate > 0 {
		h.Window = append(h.Window, now)
	}
}

// admitHead moves handlers from the queue's head to the holders while the
// limit allows, and sets h.NextDue when the rate holds the head back.
func admitHead(h *SlotHeader, rows SlotRows, c persistence.SlotChange) ([]string, error) {
	var admitted []string
	h.NextDue = time.Time{}
	for h.Queued > 0 {
		if !admits(h, c.Limit, c.Now) {
			if c.Limit.Rate > 0 && len(h.Window) >= c.Limit.Rate && (c.Limit.Max == 0 || h.Holding < c.Limit.Max) {
				h.NextDue = h.Window[0].Add(c.Limit.Per)
			}
			break
		}
		id, seq, ok, err := rows.Head()
		if err != nil {
			return admitted, err
		}
		if !ok {
			return admitted, fmt.Errorf("%w: concurrency key counts %d queued, and its queue is empty", persistence.ErrCorrupt, h.Queued)
		}
		if err := rows.Admit(id, seq, c.Now); err != nil {
			return admitted, err
		}
		h.Queued--
		take(h, c.Limit, c.Now)
		admitted = append(admitted, id)
	}
	if c.Limit.Rate == 0 {
		h.Window = nil
	} else if h.Queued == 0 {
		admits(h, c.Limit, c.Now) // forgets what the rate no longer counts
	}
	return admitted, nil
}

// admits reports whether the limit lets one more in at now, and forgets
// the admissions older than the rate's interval.
func admits(h *SlotHeader, l persistence.SlotLimit, now time.Time) bool {
	if l.Rate > 0 {
		i := 0
		for i < len(h.Window) && !h.Window[i].After(now.Add(-l.Per)) {
			i++
		}
		h.Window = h.Window[i:]
		if len(h.Window) > l.Rate {
			// The rate was lowered: only the newest Rate count.
			h.Window = h.Window[len(h.Window)-l.Rate:]
		}
	}
	return (l.Max == 0 || h.Holding < l.Max) && (l.Rate == 0 || len(h.Window) < l.Rate)
}

// EncodeSlotHeader encodes h for a backend that stores it as bytes.
func EncodeSlotHeader(h *SlotHeader) []byte {
	b := make([]byte, 0, 32+8*len(h.Window))
	b = append(b, 1) // format
	b = binary.AppendUvarint(b, uint64(h.Holding))
	b = binary.AppendUvarint(b, uint64(h.Queued))
	b = binary.AppendUvarint(b, h.NextSeq)
	b = binary.AppendVarint(b, unixNano(h.NextDue))
	b = binary.AppendUvarint(b, uint64(len(h.Window)))
	for _, t := range h.Window {
		b = binary.AppendVarint(b, t.UnixNano())
	}
	return b
}

// DecodeSlotHeader decodes EncodeSlotHeader's bytes.
func DecodeSlotHeader(b []byte) (SlotHeader, error) {
	var h SlotHeader
	bad := fmt.Errorf("%w: concurrency key header", persistence.ErrCorrupt)
	if len(b) == 0 || b[0] != 1 {
		return h, bad
	}
	b = b[1:]
	var vals [4]uint64
	for i := range 3 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return h, bad
		}
		vals[i], b = v, b[n:]
	}
	due, n := binary.Varint(b)
	if n <= 0 {
		return h, bad
	}
	b = b[n:]
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(persistence.MaxSlotRate)+1 {
		return h, bad
	}
	b = b[n:]
	h.Holding, h.Queued, h.NextSeq = int(vals[0]), int(vals[1]), vals[2]
	if due != 0 {
		h.NextDue = time.Unix(0, due).UTC()
	}
	for range count {
		t, n := binary.Varint(b)
		if n <= 0 {
			return h, bad
		}
		b = b[n:]
		h.Window = append(h.Window, time.Unix(0, t).UTC())
	}
	if len(b) != 0 {
		return h, bad
	}
	return h, nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
