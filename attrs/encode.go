package attrs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// encodingVersion is the first byte of an encoded Set.
const encodingVersion = 1

// Encode returns the stored form of s, kept with the handler's metadata.
// An empty Set encodes as nil. The encoding is binary, versioned and
// canonical (one encoding per Set, so equal Sets store equal bytes):
//
//	version  byte: 1
//	count    uvarint: attributes, 1 to MaxAttributes
//	then, per attribute, in increasing order of name:
//	  name     uvarint length, bytes
//	  type     byte: the Type (1 string … 6 time)
//	  value    string:       uvarint length, bytes
//	           keyword_list: uvarint count, then each item as a string
//	           int:          varint (zig-zag)
//	           double:       8 bytes, IEEE 754 bits, big-endian
//	           bool:         byte 0 or 1
//	           time:         varint Unix microseconds
//
// A Set that no Convert could produce (too many attributes, a bad name, a
// null, a value out of the limits) is refused with an error wrapping
// ErrInvalid (an *AttributeError for one attribute).
func Encode(s Set) ([]byte, error) {
	if len(s) == 0 {
		return nil, nil
	}
	if len(s) > MaxAttributes {
		return nil, fmt.Errorf("%w: at most %d attributes, not %d", ErrInvalid, MaxAttributes, len(s))
	}
	b := append(make([]byte, 0, 64), encodingVersion)
	b = binary.AppendUvarint(b, uint64(len(s)))
	for _, name := range slices.Sorted(maps.Keys(s)) {
		v := s[name]
		if msg := checkName(name); msg != "" {
			return nil, &AttributeError{Name: name, Msg: msg}
		}
		if msg := v.check(); msg != "" {
			return nil, &AttributeError{Name: name, Msg: msg}
		}
		b = appendString(b, name)
		b = append(b, byte(v.typ))
		switch v.typ {
		case String:
			b = appendString(b, v.str)
		case KeywordList:
			b = binary.AppendUvarint(b, uint64(len(v.list)))
			for _, item := range v.list {
				b = appendString(b, item)
			}
		case Double:
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.dbl))
		case Bool:
			b = append(b, byte(v.num))
		default: // Int, Time
			b = binary.AppendVarint(b, v.num)
		}
	}
	return b, nil
}

// Check reports what Encode would refuse of s, without encoding it: the
// cheap check of a Set a caller was handed.
func (s Set) Check() error {
	if len(s) > MaxAttributes {
		return fmt.Errorf("%w: at most %d attributes, not %d", ErrInvalid, MaxAttributes, len(s))
	}
	for name, v := range s {
		if msg := checkName(name); msg != "" {
			return &AttributeError{Name: name, Msg: msg}
		}
		if msg := v.check(); msg != "" {
			return &AttributeError{Name: name, Msg: msg}
		}
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// Decode parses what Encode wrote; nil or empty is the empty (nil) Set.
// Anything else is refused: another version, a truncated or overlong
// input, a value out of the limits, a form Encode would not write (names
// out of order, an overlong varint). Its errors do not wrap ErrInvalid:
// they mean the stored metadata is damaged.
func Decode(b []byte) (Set, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != encodingVersion {
		return nil, fmt.Errorf("attrs: decode: unknown version %d", b[0])
	}
	d := decoder{b: b[1:]}
	n := d.uvarint()
	if d.err == nil && (n == 0 || n > MaxAttributes) {
		d.fail("%d attributes", n)
	}
	s := make(Set, min(n, MaxAttributes))
	for i := uint64(0); i < n && d.err == nil; i++ {
		name := d.string()
		v := d.value()
		if d.err != nil {
			break
		}
		if _, dup := s[name]; dup {
			d.fail("attribute %q twice", name)
		}
		s[name] = v
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes after the last attribute", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("attrs: decode: %w", d.err)
	}
	// What Encode refuses (bad names, values out of the limits) and what it
	// would write otherwise (order, varint forms) is refused too: a Set
	// decodes only from its one encoding.
	again, err := Encode(s)
	if err != nil {
		// %v, not %w: damage in the store is not the caller's ErrInvalid.
		return nil, fmt.Errorf("attrs: decode: %v", err)
	}
	if !bytes.Equal(again, b) {
		return nil, errors.New("attrs: decode: not in canonical form")
	}
	return s, nil
}

// decoder reads an encoded Set; the first error sticks, and later reads
// return zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	n, size := binary.Uvarint(d.b)
	if size <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[size:]
	return n
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	n, size := binary.Varint(d.b)
	if size <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[size:]
	return n
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("truncated: %d bytes wanted, %d left", n, len(d.b))
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > MaxStringBytes {
		d.fail("a string of %d bytes", n)
	}
	return string(d.bytes(n))
}

func (d *decoder) value() Value {
	t := d.bytes(1)
	if d.err != nil {
		return Value{}
	}
	switch typ := Type(t[0]); typ {
	case String:
		return StringValue(d.string())
	case KeywordList:
		n := d.uvarint()
		if n > MaxListItems {
			d.fail("a keyword_list of %d items", n)
			return Value{}
		}
		items := make([]string, n)
		for i := range items {
			items[i] = d.string()
		}
		return Value{typ: KeywordList, list: items}
	case Int, Time:
		return Value{typ: typ, num: d.varint()}
	case Double:
		raw := d.bytes(8)
		if d.err != nil {
			return Value{}
		}
		// Not DoubleValue: a stored -0 must stay -0, for the check in
		// Encode to refuse it.
		return Value{typ: Double, dbl: math.Float64frombits(binary.BigEndian.Uint64(raw))}
	case Bool:
		b := d.bytes(1)
		if d.err != nil {
			return Value{}
		}
		return Value{typ: Bool, num: int64(b[0])}
	default:
		d.fail("unknown type %d", t[0])
		return Value{}
	}
}
