package attrs

import (
	"encoding/binary"
	"math"
)

// AppendKey appends an order-preserving encoding of v to dst: for any
// values v and w, bytes.Compare of their keys is v.Compare(w). A store
// whose index is a sorted key space (bbolt) answers =, in and ranges with
// seeks and scans over these keys. The key starts with the type, so that
// values of an attribute whose type changed between workflow versions
// never interleave. The keys of scalar values are prefix-free (none is a
// prefix of another), so a store may append more, such as the handler id,
// and keep the order.
//
//	string        type, the bytes with 0x00 written as 0x00 0xff, then 0x00 0x01
//	keyword_list  type, each item as a string is written (without the type)
//	int, time     type, 8 bytes big-endian with the sign bit flipped
//	double        type, 8 bytes: the IEEE bits, all flipped if negative,
//	              else with the sign bit set
//	bool          type, 0 or 1
//	null          type (0)
//
// An index for contains on a keyword_list has one entry per item: the key
// of StringValue(item).
func AppendKey(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.typ))
	switch v.typ {
	case String:
		dst = appendKeyString(dst, v.str)
	case KeywordList:
		for _, item := range v.list {
			dst = appendKeyString(dst, item)
		}
	case Int, Time:
		dst = binary.BigEndian.AppendUint64(dst, uint64(v.num)^1<<63)
	case Double:
		bits := math.Float64bits(v.dbl)
		if bits>>63 == 1 {
			bits = ^bits
		} else {
			bits |= 1 << 63
		}
		dst = binary.BigEndian.AppendUint64(dst, bits)
	case Bool:
		dst = append(dst, byte(v.num))
	}
	return dst
}

// appendKeyString escapes 0x00 so that the terminator 0x00 0x01 sorts
// below every continuation of the string (0x00 0xff, or any other byte).
func appendKeyString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0, 0xff)
		} else {
			dst = append(dst, s[i])
		}
	}
	return append(dst, 0, 1)
}
