package payload_test

import (
	"encoding/binary"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/payload"
)

// FuzzPayload checks, for any Struct, that what Check accepts and what
// Sanitize returns both marshal with protojson (Connect JSON) and proto,
// that Sanitize never changes its argument, and that neither panics. The
// bytes are read two ways: as binary protobuf (what a client can send:
// NaN, kind-less values, deep nesting) and as a recipe for a Struct that
// only Go code can build (nil values, invalid UTF-8).
func FuzzPayload(f *testing.F) {
	seeds := []*structpb.Struct{
		obj(map[string]*structpb.Value{"x": structpb.NewNumberValue(math.NaN()), "l": list(structpb.NewNumberValue(math.Inf(-1)), &structpb.Value{})}),
		obj(map[string]*structpb.Value{"ok": structpb.NewStringValue("é"), "o": structpb.NewStructValue(nested(3))}),
		nested(40),
	}
	for _, s := range seeds {
		b, err := proto.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x05, 0xff, 0x01, 0x80, 0x03, 0x00, 0x04, 0x02})
	lim := payload.Limits{MaxDepth: 8, MaxBytes: 4 << 10}
	f.Fuzz(func(t *testing.T, b []byte) {
		fromWire := func() *structpb.Struct {
			var s structpb.Struct
			if proto.Unmarshal(b, &s) != nil {
				return nil
			}
			return &s
		}
		if fromWire() != nil {
			checkBoth(t, lim, fromWire)
		}
		checkBoth(t, lim, func() *structpb.Struct { g := gen{b: b}; return g.object(0) })
	})
}

// checkBoth checks the payload build makes; build makes the same one
// every time, so that a second copy shows whether Sanitize changed the first.
func checkBoth(t *testing.T, lim payload.Limits, build func() *structpb.Struct) {
	t.Helper()
	s := build()
	if err := payload.Check(lim, "p", s); err == nil {
		mustMarshal(t, "checked", s)
	}
	out := payload.Sanitize(s)
	if !sameObject(s, build()) {
		t.Fatal("Sanitize changed its argument")
	}
	mustMarshal(t, "sanitized", out)
	// What Sanitize returns passes every check but the limits.
	if err := payload.Check(payload.Limits{MaxDepth: math.MaxInt32, MaxBytes: math.MaxInt32}, "p", out); err != nil {
		t.Fatalf("sanitized payload fails Check: %v", err)
	}
}

// sameObject compares bit for bit (proto.Equal says NaN != NaN).
func sameObject(a, b *structpb.Struct) bool {
	if len(a.GetFields()) != len(b.GetFields()) {
		return false
	}
	for k, v := range a.GetFields() {
		w, ok := b.GetFields()[k]
		if !ok || !sameValue(v, w) {
			return false
		}
	}
	return true
}

func sameValue(a, b *structpb.Value) bool {
	switch x := a.GetKind().(type) {
	case *structpb.Value_NumberValue:
		y, ok := b.GetKind().(*structpb.Value_NumberValue)
		return ok && math.Float64bits(x.NumberValue) == math.Float64bits(y.NumberValue)
	case *structpb.Value_StructValue:
		y, ok := b.GetKind().(*structpb.Value_StructValue)
		return ok && sameObject(x.StructValue, y.StructValue)
	case *structpb.Value_ListValue:
		y, ok := b.GetKind().(*structpb.Value_ListValue)
		if !ok || len(x.ListValue.GetValues()) != len(y.ListValue.GetValues()) {
			return false
		}
		for i, e := range x.ListValue.GetValues() {
			if !sameValue(e, y.ListValue.GetValues()[i]) {
				return false
			}
		}
		return true
	}
	if a.GetKind() == nil || b.GetKind() == nil {
		return (a == nil) == (b == nil) && a.GetKind() == nil && b.GetKind() == nil
	}
	return proto.Equal(a, b)
}

func mustMarshal(t *testing.T, what string, s *structpb.Struct) {
	t.Helper()
	j, err := protojson.Marshal(s)
	if err != nil {
		t.Fatalf("%s payload does not marshal to JSON: %v", what, err)
	}
	if _, err := proto.Marshal(s); err != nil {
		t.Fatalf("%s payload does not marshal to protobuf: %v", what, err)
	}
	var back structpb.Struct
	if err := protojson.Unmarshal(j, &back); err != nil {
		t.Fatalf("%s payload's JSON does not read back: %v\n%s", what, err, j)
	}
}

// gen builds a Struct from bytes, including what only Go code can make.
type gen struct{ b []byte }

func (g *gen) next() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *gen) str() string {
	n := int(g.next() % 6)
	s := make([]byte, 0, n)
	for range n {
		s = append(s, g.next())
	}
	return string(s) // may be invalid UTF-8
}

func (g *gen) object(depth int) *structpb.Struct {
	n := int(g.next() % 4)
	if depth > 12 {
		n = 0
	}
	s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	for range n {
		s.Fields[g.str()] = g.value(depth + 1)
	}
	return s
}

func (g *gen) value(depth int) *structpb.Value {
	switch g.next() % 10 {
	case 0:
		return nil
	case 1:
		return &structpb.Value{}
	case 2:
		var b [8]byte
		for i := range b {
			b[i] = g.next()
		}
		return structpb.NewNumberValue(math.Float64frombits(binary.LittleEndian.Uint64(b[:])))
	case 3:
		return structpb.NewStringValue(g.str())
	case 4:
		return structpb.NewBoolValue(g.next()%2 == 0)
	case 5:
		return structpb.NewNullValue()
	case 6:
		return structpb.NewStructValue(g.object(depth))
	case 7:
		n := int(g.next() % 4)
		if depth > 12 {
			n = 0
		}
		l := &structpb.ListValue{}
		for range n {
			l.Values = append(l.Values, g.value(depth+1))
		}
		return structpb.NewListValue(l)
	case 8:
		return &structpb.Value{Kind: &structpb.Value_StructValue{}}
	default:
		return structpb.NewNumberValue([]float64{math.NaN(), math.Inf(1), math.Inf(-1)}[g.next()%3])
	}
}
