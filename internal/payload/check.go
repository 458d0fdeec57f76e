// Package payload checks the google.protobuf.Struct values that carry
// wfd's payloads (workflow inputs, event data, results, stored values,
// task answers), and repairs stored ones for output.
//
// Binary protobuf can carry values that JSON cannot: NaN and ±Infinity
// numbers, a Value with no kind set, and (from Go code) strings that are
// not UTF-8. Once stored, such a value makes every JSON answer that
// includes it fail. Check refuses them, together with nesting deeper and
// encodings larger than the configured limits, wherever a payload enters
// wfd: the server's edge (from clients) and the engine (from step code).
// Sanitize makes whatever a store already holds printable, so that no
// stored value can make a read or a list fail.
//
// Both the engine and the server use this package, so that a payload the
// server accepts is one the engine accepts too.
package payload

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// Default limits.
const (
	// DefaultMaxDepth is how deeply objects and lists may nest: the payload
	// itself is level 1, so {"a": {"b": [1]}} has 3 levels.
	DefaultMaxDepth = 32
	// DefaultMaxBytes is the largest encoded (binary protobuf) payload.
	DefaultMaxBytes = 1 << 20
)

// Limits bound a payload. A zero or negative field takes its default.
type Limits struct {
	MaxDepth int
	MaxBytes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// ErrInvalid is what every Check error is (errors.Is).
var ErrInvalid = errors.New("invalid payload")

// Error says which value of a payload is wrong and why.
type Error struct {
	// Path names the value: the payload's name, then .field or ["field"]
	// for object fields and [i] for list items, as in input.items[3].x.
	Path    string
	Problem string
}

func (e *Error) Error() string { return e.Path + ": " + e.Problem }

// Is makes every Error match ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Check reports the first value of s that JSON cannot hold, or that breaks
// the limits; name names s in the error (input, event.data, ...). A nil s
// is an empty object and passes.
func Check(l Limits, name string, s *structpb.Struct) error {
	_, err := Measure(l, name, s)
	return err
}

// Measure is Check that also returns the payload's encoded size.
func Measure(l Limits, name string, s *structpb.Struct) (int, error) {
	if s == nil {
		return 0, nil
	}
	l = l.withDefaults()
	c := checker{max: l.MaxDepth}
	if c.object(s, 1) {
		return 0, c.err(name)
	}
	n := proto.Size(s)
	if n > l.MaxBytes {
		return n, &Error{Path: name, Problem: tooLarge(n, l.MaxBytes)}
	}
	return n, nil
}

// CheckValue is Check for a single value (a stored value, say).
func CheckValue(l Limits, name string, v *structpb.Value) error {
	l = l.withDefaults()
	c := checker{max: l.MaxDepth}
	if c.value(v, 0) {
		return c.err(name)
	}
	if n := proto.Size(v); n > l.MaxBytes {
		return &Error{Path: name, Problem: tooLarge(n, l.MaxBytes)}
	}
	return nil
}

func tooLarge(n, limit int) string {
	return "encodes to " + strconv.Itoa(n) + " bytes, over the limit of " + strconv.Itoa(limit)
}

// checker walks a payload. It allocates nothing unless it finds a
// problem: the path is gathered on the way back up, innermost first.
type checker struct {
	max     int
	problem string
	segs    []string
}

func (c *checker) err(name string) error {
	var b strings.Builder
	b.WriteString(name)
	for _, s := range slices.Backward(c.segs) {
		b.WriteString(s)
	}
	return &Error{Path: b.String(), Problem: c.problem}
}

func (c *checker) fail(problem string) bool {
	c.problem = problem
	return true
}

// object checks an object at nesting level depth; it reports true on a
// problem.
func (c *checker) object(s *structpb.Struct, depth int) bool {
	if depth > c.max {
		return c.fail("nested deeper than " + strconv.Itoa(c.max) + " levels")
	}
	for k, v := range s.GetFields() {
		if !utf8.ValidString(k) {
			c.segs = append(c.segs, fieldSeg(k))
			return c.fail("field name is not valid UTF-8")
		}
		if c.value(v, depth) {
			c.segs = append(c.segs, fieldSeg(k))
			return true
		}
	}
	return false
}

// value checks a value inside a container at level depth.
func (c *checker) value(v *structpb.Value, depth int) bool {
	switch k := v.GetKind().(type) {
	case nil:
		return c.fail("value has no kind (null, number, string, bool, object or list)")
	case *structpb.Value_NumberValue:
		switch f := k.NumberValue; {
		case math.IsNaN(f):
			return c.fail("NaN is not allowed (JSON has no NaN)")
		case math.IsInf(f, 1):
			return c.fail("Infinity is not allowed (JSON has no Infinity)")
		case math.IsInf(f, -1):
			return c.fail("-Infinity is not allowed (JSON has no Infinity)")
		}
	case *structpb.Value_StringValue:
		if !utf8.ValidString(k.StringValue) {
			return c.fail("string is not valid UTF-8")
		}
	case *structpb.Value_StructValue:
		return c.object(k.StructValue, depth+1)
	case *structpb.Value_ListValue:
		if depth+1 > c.max {
			return c.fail("nested deeper than " + strconv.Itoa(c.max) + " levels")
		}
		for i, e := range k.ListValue.GetValues() {
			if c.value(e, depth+1) {
				c.segs = append(c.segs, "["+strconv.Itoa(i)+"]")
				return true
			}
		}
	}
	return false
}

// fieldSeg is the path segment of an object field: .name for a plain
// name, ["any other"] otherwise.
func fieldSeg(k string) string {
	plain := k != ""
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}
