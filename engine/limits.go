package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	pl "github.com/wfd-dev/wfd/internal/payload"
)

// Default limits (Limits).
const (
	DefaultMaxChildren     = 1000
	DefaultMaxQueuedEvents = 10000
	DefaultMaxRecordBytes  = 1 << 20
	DefaultMaxStoreBytes   = 1 << 20
	DefaultMaxPayloadDepth = pl.DefaultMaxDepth
	DefaultMaxPayloadBytes = pl.DefaultMaxBytes
)

// Limits bound what one handler may hold and what one step run may
// produce, so that no input makes the engine allocate without bound. A
// step that would pass a limit fails its run with an error wrapping
// ErrLimit (or ErrInvalidPayload), through the step's retry policy as any
// failure; an event from outside that would pass one is refused with
// ErrLimit. A zero or negative field takes its default.
type Limits struct {
	// MaxChildren is how many children one handler may start in its life
	// (default 1,000).
	MaxChildren int
	// MaxQueuedEvents is how many events one handler may hold for its
	// steps (queued to run, parked in a wait, or gathered for fan-in), how
	// many events one step run may send and write, and how many waits one
	// run may pass (default 10,000).
	MaxQueuedEvents int
	// MaxRecordBytes is the largest encoded data of an event a step writes
	// to the stream (default 1 MiB).
	MaxRecordBytes int
	// MaxStoreBytes is the largest encoded size of a handler's key/value
	// store, memos (Once) and fan-in sets (Collect) included (default 1 MiB).
	MaxStoreBytes int
	// MaxPayloadDepth is how deeply objects and lists may nest in a payload
	// (default 32; the payload itself is level 1).
	MaxPayloadDepth int
	// MaxPayloadBytes is the largest encoded payload: an input, the data
	// of an event sent or received, a result, a stored value, a task's
	// schema (default 1 MiB).
	MaxPayloadBytes int
}

// runOutputPayloads bounds the bytes one step run may send and write in
// all, as a multiple of MaxPayloadBytes (16 MiB by default): each event
// is bounded, and so is their count, but not their product.
const runOutputPayloads = 16

// maxErrorBytes bounds a run's error as recorded on the stream and as a
// handler's error.
const maxErrorBytes = 4 << 10

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxChildren, DefaultMaxChildren)
	def(&l.MaxQueuedEvents, DefaultMaxQueuedEvents)
	def(&l.MaxRecordBytes, DefaultMaxRecordBytes)
	def(&l.MaxStoreBytes, DefaultMaxStoreBytes)
	def(&l.MaxPayloadDepth, DefaultMaxPayloadDepth)
	def(&l.MaxPayloadBytes, DefaultMaxPayloadBytes)
	return l
}

func (l Limits) payload() pl.Limits {
	return pl.Limits{MaxDepth: l.MaxPayloadDepth, MaxBytes: l.MaxPayloadBytes}
}

// Limits returns the limits the engine applies, defaults filled in.
func (e *Engine) Limits() Limits { return e.lim }

// MaxRunOutputBytes is how many bytes of event data one step run may send
// and write in all: 16 × MaxPayloadBytes (its default when unset). A
// server that carries a run's output over the wire must take at least
// this much, plus its own framing.
func (l Limits) MaxRunOutputBytes() int {
	return runOutputPayloads * l.withDefaults().MaxPayloadBytes
}

// cleanError makes a run's error fit for the stream and the store: valid
// UTF-8 (protobuf refuses anything else, which would fail every
// checkpoint of the handler) and at most maxErrorBytes.
func cleanError(s string) string {
	if len(s) > maxErrorBytes {
		cut := maxErrorBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "… (truncated)"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// kvSize is what one entry of the key/value store counts against
// MaxStoreBytes.
func kvSize(key string, v *structpb.Value) int {
	return len(key) + proto.Size(v)
}

// held counts the events a handler holds for its steps: queued to run,
// parked in a wait (a waiter keeps its run's input) and gathered for
// fan-in.
func (s *state) held() int {
	n := 0
	for i := range s.steps {
		ss := &s.steps[i]
		n += len(ss.queue) + len(ss.waiters) + len(ss.collected)
	}
	if s.queued() {
		n += len(s.more.slot.held)
	}
	return n
}

// queuedBy counts the queue entries that delivering evs adds (a stop
// event adds none, a reserved type is never accepted by a step).
func (c *compiled) queuedBy(evs []Event) int {
	n := 0
	for _, ev := range evs {
		n += len(c.accepting[ev.Type])
	}
	return n
}

// checkHeld refuses to deliver evs when the handler would then hold more
// events than the limit.
func (r *runner) checkHeld(evs []Event) error {
	add := r.wf.queuedBy(evs)
	if add == 0 {
		return nil
	}
	limit := r.h.e.lim.MaxQueuedEvents
	if held := r.s.held(); held+add > limit {
		return fmt.Errorf("%w: handler %s holds %d queued events; %d more would pass the limit of %d (Limits.MaxQueuedEvents)",
			ErrLimit, r.s.id, held, add, limit)
	}
	return nil
}

// setKV stores v under key in the handler's key/value store (nil deletes
// it), keeping the store within limit bytes.
func (s *state) setKV(key string, v *structpb.Value, limit int) error {
	old, had := s.rare().kv[key]
	if v == nil {
		if had {
			delete(s.more.kv, key)
			s.more.kvBytes -= kvSize(key, old)
		}
		return nil
	}
	total := s.rare().kvBytes + kvSize(key, v)
	if had {
		total -= kvSize(key, old)
	}
	if total > limit {
		return fmt.Errorf("%w: the key/value store of handler %s would hold %d bytes, over the limit of %d (Limits.MaxStoreBytes)",
			ErrLimit, s.id, total, limit)
	}
	m := s.rareMut()
	if m.kv == nil {
		m.kv = map[string]*structpb.Value{}
	}
	m.kv[key] = v
	m.kvBytes = total
	return nil
}
