package attrs

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"
)

// Set is a handler's search attributes: name → value. A stored Set has no
// null values; an update may (Merge).
type Set map[string]Value

// Equal reports whether s and o hold the same names with equal values.
func (s Set) Equal(o Set) bool { return maps.EqualFunc(s, o, Value.Equal) }

// Merge returns old with update applied: each value of update replaces
// the attribute's, and a null value deletes it. Neither argument changes;
// the result is nil when no attribute is left. This is how a step's
// update (SetAttributes) changes what the handler's metadata holds, and
// Merge(nil, s) drops the nulls of a Set given at start.
func Merge(old, update Set) Set {
	out := make(Set, len(old)+len(update))
	maps.Copy(out, old)
	for name, v := range update {
		if v.IsNull() {
			delete(out, name)
		} else {
			out[name] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Struct returns s as the API and the SDKs send and show it: strings,
// lists of strings, numbers, booleans, and times as RFC 3339 strings in
// UTC. Convert reads it back (with the schema, which tells a time from a
// string).
func (s Set) Struct() *structpb.Struct {
	st := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(s))}
	for name, v := range s {
		st.Fields[name] = v.Proto()
	}
	return st
}

// Proto returns v as a structpb.Value (see Set.Struct); null is NullValue.
func (v Value) Proto() *structpb.Value {
	switch v.typ {
	case String:
		return structpb.NewStringValue(v.str)
	case KeywordList:
		items := make([]*structpb.Value, len(v.list))
		for i, s := range v.list {
			items[i] = structpb.NewStringValue(s)
		}
		return structpb.NewListValue(&structpb.ListValue{Values: items})
	case Int:
		return structpb.NewNumberValue(float64(v.num))
	case Double:
		return structpb.NewNumberValue(v.dbl)
	case Bool:
		return structpb.NewBoolValue(v.num == 1)
	case Time:
		return structpb.NewStringValue(v.AsTime().Format(time.RFC3339Nano))
	default:
		return structpb.NewNullValue()
	}
}

// Convert checks the attributes the API received (at start, or in a
// step's update) against s and returns them typed. Every name must be
// declared and every value of its declared type: a string; a list of
// strings; an int as a number that is integral and within ±MaxInt; a
// double as a finite number; a bool; a time as an RFC 3339 string (kept
// to the microsecond, in UTC). A JSON null (or a missing value) is the
// null Value: it deletes the attribute when merged. Nothing is converted
// unless everything is: the error is an *AttributeError about the first
// bad attribute in sorted order, such as
//
//	attribute "amount": want int, got string "x"
func (s Schema) Convert(st *structpb.Struct) (Set, error) {
	fields := st.GetFields()
	if len(fields) == 0 {
		return nil, nil
	}
	out := make(Set, len(fields))
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		t, ok := s[name]
		if !ok {
			return nil, &AttributeError{Name: name, Msg: "not declared by the workflow"}
		}
		v, msg := convert(t, fields[name])
		if msg != "" {
			return nil, &AttributeError{Name: name, Msg: msg}
		}
		out[name] = v
	}
	return out, nil
}

// convert reads pv as a value of type t; the message says why it cannot.
func convert(t Type, pv *structpb.Value) (Value, string) {
	if _, null := pv.GetKind().(*structpb.Value_NullValue); null || pv.GetKind() == nil {
		return Value{}, ""
	}
	var v Value
	switch t {
	case String:
		s, ok := pv.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return Value{}, "want string, got " + describe(pv)
		}
		v = StringValue(s.StringValue)
	case KeywordList:
		return convertList(pv)
	case Int, Double:
		return convertNumber(t, pv)
	case Bool:
		b, ok := pv.GetKind().(*structpb.Value_BoolValue)
		if !ok {
			return Value{}, "want bool, got " + describe(pv)
		}
		v = BoolValue(b.BoolValue)
	case Time:
		_, ok := pv.GetKind().(*structpb.Value_StringValue)
		tm, err := time.Parse(time.RFC3339Nano, pv.GetStringValue())
		if !ok || err != nil {
			return Value{}, `want time (an RFC 3339 string such as "2025-01-31T09:00:00Z"), got ` + describe(pv)
		}
		v = TimeValue(tm)
	default:
		return Value{}, fmt.Sprintf("unknown type %v", t)
	}
	return v, v.check()
}

func convertList(pv *structpb.Value) (Value, string) {
	l, ok := pv.GetKind().(*structpb.Value_ListValue)
	if !ok {
		return Value{}, "want keyword_list (a list of strings), got " + describe(pv)
	}
	items := l.ListValue.GetValues()
	if len(items) > MaxListItems {
		return Value{}, fmt.Sprintf("a keyword_list has at most %d items, not %d", MaxListItems, len(items))
	}
	strs := make([]string, len(items))
	for i, item := range items {
		s, ok := item.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return Value{}, fmt.Sprintf("want keyword_list (a list of strings), got %s as item %d", describe(item), i+1)
		}
		strs[i] = s.StringValue
	}
	v := Value{typ: KeywordList, list: strs}
	return v, v.check()
}

func convertNumber(t Type, pv *structpb.Value) (Value, string) {
	n, ok := pv.GetKind().(*structpb.Value_NumberValue)
	if !ok {
		return Value{}, fmt.Sprintf("want %v, got %s", t, describe(pv))
	}
	f := n.NumberValue
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return Value{}, fmt.Sprintf("want %v, got %v", t, f)
	case t == Double:
		return DoubleValue(f), ""
	case f != math.Trunc(f):
		return Value{}, "want int, got number " + formatNumber(f)
	case math.Abs(f) > MaxInt:
		return Value{}, fmt.Sprintf("int %s out of range ±%d", formatNumber(f), MaxInt)
	}
	return IntValue(int64(f)), ""
}

// describe writes a received value for a message: its kind and, for a
// scalar, the value (a long string cut short).
func describe(pv *structpb.Value) string {
	switch k := pv.GetKind().(type) {
	case *structpb.Value_StringValue:
		s := k.StringValue
		if len(s) > 40 {
			cut := 40
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut] + "…"
		}
		return "string " + quote(s)
	case *structpb.Value_NumberValue:
		return "number " + formatNumber(k.NumberValue)
	case *structpb.Value_BoolValue:
		return fmt.Sprintf("bool %v", k.BoolValue)
	case *structpb.Value_ListValue:
		return "a list"
	case *structpb.Value_StructValue:
		return "an object"
	default:
		return "null"
	}
}

// formatNumber writes a received number as JavaScript does: 3, 1.5,
// 9007199254740992, and an exponent only for the very large and small.
func formatNumber(f float64) string {
	if a := math.Abs(f); a == 0 || a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
