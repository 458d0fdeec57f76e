package attrs

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Value is one attribute's value: a tagged union of the Types. The zero
// Value is null, which in an update deletes the attribute (Merge) and is
// never stored. Values are immutable: the constructors copy what they are
// given and the accessors copy what they return.
type Value struct {
	typ  Type
	str  string   // String
	list []string // KeywordList; never shared with a caller
	num  int64    // Int; Bool (0 or 1); Time (Unix microseconds)
	dbl  float64  // Double
}

// Bounds of a time value in Unix microseconds: the years RFC 3339 can
// write, 0000 to 9999.
const (
	minTimeMicros = -62167219200 * 1e6 // 0000-01-01T00:00:00Z
	endTimeMicros = 253402300800 * 1e6 // 10000-01-01T00:00:00Z, excluded
)

// StringValue returns a string value.
func StringValue(s string) Value { return Value{typ: String, str: s} }

// KeywordListValue returns a keyword_list value of the items, in order.
func KeywordListValue(items ...string) Value {
	return Value{typ: KeywordList, list: append([]string{}, items...)}
}

// IntValue returns an int value.
func IntValue(n int64) Value { return Value{typ: Int, num: n} }

// DoubleValue returns a double value. -0 becomes 0, so that a value has
// one encoding.
func DoubleValue(f float64) Value {
	if f == 0 {
		f = 0
	}
	return Value{typ: Double, dbl: f}
}

// BoolValue returns a bool value.
func BoolValue(b bool) Value {
	v := Value{typ: Bool}
	if b {
		v.num = 1
	}
	return v
}

// TimeValue returns a time value: t truncated to the microsecond, which is
// what PostgreSQL keeps, so that both stores hold and compare the same
// instant.
func TimeValue(t time.Time) Value { return Value{typ: Time, num: t.UnixMicro()} }

// Type returns v's type; 0 for null.
func (v Value) Type() Type { return v.typ }

// IsNull reports whether v is the null Value.
func (v Value) IsNull() bool { return v.typ == 0 }

// AsString returns a string value ("" for other types).
func (v Value) AsString() string { return v.str }

// AsList returns a copy of a keyword_list value's items (nil for other types).
func (v Value) AsList() []string { return slices.Clone(v.list) }

// AsInt returns an int value (0 for other types).
func (v Value) AsInt() int64 {
	if v.typ != Int {
		return 0
	}
	return v.num
}

// AsDouble returns a double value (0 for other types).
func (v Value) AsDouble() float64 { return v.dbl }

// AsBool returns a bool value (false for other types).
func (v Value) AsBool() bool { return v.typ == Bool && v.num == 1 }

// AsTime returns a time value in UTC (the zero time for other types).
func (v Value) AsTime() time.Time {
	if v.typ != Time {
		return time.Time{}
	}
	return time.UnixMicro(v.num).UTC()
}

// Equal reports whether v and w are the same value of the same type.
func (v Value) Equal(w Value) bool { return v.Compare(w) == 0 }

// Compare orders values: by type (in the order of the Type constants, null
// first), then by value: strings by their bytes (PostgreSQL's COLLATE "C"),
// numbers and times numerically, false before true, keyword lists item by
// item and then by length. It is a total order (a valid double is never
// NaN), and AppendKey's byte order is the same.
func (v Value) Compare(w Value) int {
	if c := cmp.Compare(v.typ, w.typ); c != 0 {
		return c
	}
	switch v.typ {
	case String:
		return strings.Compare(v.str, w.str)
	case KeywordList:
		return slices.Compare(v.list, w.list)
	case Double:
		return cmp.Compare(v.dbl, w.dbl)
	default: // Int, Bool, Time; null has num 0
		return cmp.Compare(v.num, w.num)
	}
}

// String writes v as a query literal would: strings and times quoted,
// numbers as numbers (a double with a point or an exponent), a keyword
// list as ["a", "b"], null as null. It is meant for messages and tests.
func (v Value) String() string {
	switch v.typ {
	case String:
		return quote(v.str)
	case KeywordList:
		items := make([]string, len(v.list))
		for i, s := range v.list {
			items[i] = quote(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case Int:
		return strconv.FormatInt(v.num, 10)
	case Double:
		return formatDouble(v.dbl)
	case Bool:
		return strconv.FormatBool(v.num == 1)
	case Time:
		return quote(v.AsTime().Format(time.RFC3339Nano))
	default:
		return "null"
	}
}

// check reports why v cannot be stored, or "". Null cannot: it only
// deletes.
func (v Value) check() string {
	switch v.typ {
	case String:
		return checkString(v.str)
	case KeywordList:
		return checkList(v.list)
	case Int:
		if v.num < -MaxInt || v.num > MaxInt {
			return fmt.Sprintf("int %d out of range ±%d", v.num, MaxInt)
		}
	case Double:
		if math.IsNaN(v.dbl) || math.IsInf(v.dbl, 0) {
			return fmt.Sprintf("a double is finite, not %v", v.dbl)
		}
		if math.Signbit(v.dbl) && v.dbl == 0 {
			return "a double is 0, not -0" // only a hand-built Value; DoubleValue normalises
		}
	case Bool:
		if v.num != 0 && v.num != 1 {
			return "a bool is true or false"
		}
	case Time:
		if v.num < minTimeMicros || v.num >= endTimeMicros {
			return "a time is in the years 0000 to 9999"
		}
	case 0:
		return "null is not a value"
	default:
		return fmt.Sprintf("unknown type %v", v.typ)
	}
	return ""
}

// checkList reports why items cannot be a keyword_list, or "".
func checkList(items []string) string {
	if len(items) > MaxListItems {
		return fmt.Sprintf("a keyword_list has at most %d items, not %d", MaxListItems, len(items))
	}
	for i, s := range items {
		if msg := checkString(s); msg != "" {
			return fmt.Sprintf("item %d: %s", i+1, msg)
		}
	}
	return ""
}

// checkString reports why s cannot be a string value (or list item), or "".
func checkString(s string) string {
	switch {
	case len(s) > MaxStringBytes:
		return fmt.Sprintf("a string is at most %d bytes, not %d", MaxStringBytes, len(s))
	case !utf8.ValidString(s):
		return "a string is valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "a string cannot contain NUL (PostgreSQL's text cannot)"
	}
	return ""
}

// formatDouble writes f so that it reads back as a double: with a decimal
// point or an exponent.
func formatDouble(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}

// quote writes s as a query's string literal: in double quotes, with ", \
// and control characters escaped, everything else as it is.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
