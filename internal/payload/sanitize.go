package payload

import (
	"math"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// Sanitize returns s in a form JSON can hold, for output. Whatever a store
// holds (written before payloads were checked, or by another program)
// must not make a read or a list fail, so instead of refusing, it
// replaces:
//
//   - NaN, +Infinity and -Infinity by the strings "NaN", "Infinity" and
//     "-Infinity" (what proto3's JSON mapping writes for a double field),
//   - a value with no kind by null,
//   - bytes that are not UTF-8, in strings and field names, by U+FFFD.
//
// It returns s itself when nothing needs replacing (the common case, which
// allocates nothing), else a repaired copy: s is never changed, so it may
// be shared. Depth and size are left as they are; they are limits on what
// enters, not on what can be printed.
func Sanitize(s *structpb.Struct) *structpb.Struct {
	if s == nil || cleanObject(s) {
		return s
	}
	return fixObject(s)
}

// SanitizeValue is Sanitize for a single value.
func SanitizeValue(v *structpb.Value) *structpb.Value {
	if cleanValue(v) {
		return v
	}
	return fixValue(v)
}

func cleanObject(s *structpb.Struct) bool {
	for k, v := range s.GetFields() {
		if !utf8.ValidString(k) || !cleanValue(v) {
			return false
		}
	}
	return true
}

func cleanValue(v *structpb.Value) bool {
	switch k := v.GetKind().(type) {
	case nil:
		return false
	case *structpb.Value_NumberValue:
		return !math.IsNaN(k.NumberValue) && !math.IsInf(k.NumberValue, 0)
	case *structpb.Value_StringValue:
		return utf8.ValidString(k.StringValue)
	case *structpb.Value_StructValue:
		return cleanObject(k.StructValue)
	case *structpb.Value_ListValue:
		for _, e := range k.ListValue.GetValues() {
			if !cleanValue(e) {
				return false
			}
		}
	}
	return true
}

func fixObject(s *structpb.Struct) *structpb.Struct {
	out := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(s.GetFields()))}
	for k, v := range s.GetFields() {
		if !utf8.ValidString(k) {
			k = strings.ToValidUTF8(k, "\uFFFD")
			if _, taken := s.GetFields()[k]; taken {
				// A valid name wins over one repaired into it.
				continue
			}
		}
		out.Fields[k] = fixValue(v)
	}
	return out
}

func fixValue(v *structpb.Value) *structpb.Value {
	switch k := v.GetKind().(type) {
	case nil:
		return structpb.NewNullValue()
	case *structpb.Value_NumberValue:
		switch f := k.NumberValue; {
		case math.IsNaN(f):
			return structpb.NewStringValue("NaN")
		case math.IsInf(f, 1):
			return structpb.NewStringValue("Infinity")
		case math.IsInf(f, -1):
			return structpb.NewStringValue("-Infinity")
		}
	case *structpb.Value_StringValue:
		if !utf8.ValidString(k.StringValue) {
			return structpb.NewStringValue(strings.ToValidUTF8(k.StringValue, "\uFFFD"))
		}
	case *structpb.Value_StructValue:
		if !cleanObject(k.StructValue) {
			return structpb.NewStructValue(fixObject(k.StructValue))
		}
	case *structpb.Value_ListValue:
		if !cleanValue(v) {
			vals := k.ListValue.GetValues()
			out := &structpb.ListValue{Values: make([]*structpb.Value, len(vals))}
			for i, e := range vals {
				out.Values[i] = fixValue(e)
			}
			return structpb.NewListValue(out)
		}
	}
	return v
}
