package engine

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// An idle handler in memory keeps the data of its events encoded, once
// more than Options.CompactIdleAbove handlers are in memory: a decoded
// structpb.Struct costs about 400 bytes for an object of one short field (a
// map, a Value and a oneof wrapper per field), its encoding a few dozen.
// The loop freezes the data when it parks an idle handler and thaws it when
// it starts again, before it looks at any message, so no other code sees
// it frozen. Events that shared data share it again after the thaw.

// frozen is the encoded data of a state's events. The first event and its
// encoding are kept in the struct itself: most idle handlers hold one
// event (their start), and each object less is one less for the garbage
// collector to mark on every cycle while the handler stays in memory
// (issue 29: with 200,000 idle handlers, marking was a quarter of the
// server's CPU).
type frozen struct {
	first    frozenRef
	firstRaw []byte
	// The other events, and the encodings after the first (raw indexes
	// from 1: raws[raw-1]).
	raws [][]byte
	refs []frozenRef
}

// frozenRef is an event whose Data was encoded as encoding raw (0: the
// first).
type frozenRef struct {
	ev  *Event
	raw int
}

// raw is encoding i.
func (f *frozen) raw(i int) []byte {
	if i == 0 {
		return f.firstRaw
	}
	return f.raws[i-1]
}

// thawOptions read back what freeze wrote: proto.Marshal has no nesting
// limit, so neither may this.
var thawOptions = proto.UnmarshalOptions{RecursionLimit: math.MaxInt32}

// freeze encodes the data of the start event and of the events the
// handler's steps will run for (queued, or the input of a parked run) and
// of fan-in buffers, and drops the decoded data.
func (s *state) freeze() {
	if s.ice != nil {
		return
	}
	var f frozen
	var seen map[*structpb.Struct]int // index of the encoding; fan-in buffers can be long
	add := func(ev *Event) {
		d := ev.Data
		if len(d.GetFields()) == 0 {
			return // nothing to save
		}
		i, ok := seen[d]
		if !ok {
			b, err := proto.Marshal(d)
			if err != nil {
				return // invalid UTF-8, say: keep it decoded
			}
			if seen == nil {
				seen = map[*structpb.Struct]int{}
			}
			i = len(seen)
			seen[d] = i
			if i == 0 {
				f.firstRaw = b
			} else {
				f.raws = append(f.raws, b)
			}
		}
		r := frozenRef{ev: ev, raw: i}
		if f.first.ev == nil {
			f.first = r
		} else {
			f.refs = append(f.refs, r)
		}
		ev.Data = nil
	}
	add(&s.start)
	for i := range s.steps {
		ss := &s.steps[i]
		for j := range ss.queue {
			add(&ss.queue[j].ev)
		}
		for _, w := range ss.waiters {
			add(&w.resume.ev)
		}
		for j := range ss.collected {
			add(&ss.collected[j])
		}
	}
	if f.first.ev != nil {
		s.ice = &f
	}
}

// thaw decodes what freeze encoded.
func (s *state) thaw() {
	f := s.ice
	if f == nil {
		return
	}
	s.ice = nil
	data := make([]*structpb.Struct, 1+len(f.raws))
	for i := range data {
		d := &structpb.Struct{}
		if err := thawOptions.Unmarshal(f.raw(i), d); err != nil {
			// It was encoded by proto.Marshal in this process.
			panic(fmt.Sprintf("engine: decoding the frozen data of handler %s: %v", s.id, err))
		}
		data[i] = d
	}
	f.first.ev.Data = data[f.first.raw]
	for _, r := range f.refs {
		r.ev.Data = data[r.raw]
	}
}
