package attrs_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/attrs"
)

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	st, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestConvert: what the API receives, typed.
func TestConvert(t *testing.T) {
	st := mustStruct(t, map[string]any{"customer": "acme", "amount": 120, "price": 9.5, "vip": true,
		"tags": []any{"a", "b"}, "due": "2025-01-31T09:00:00.1234567+01:00", "region": nil})
	got, err := testSchema.Convert(st)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	want := attrs.Set{"customer": attrs.StringValue("acme"), "amount": attrs.IntValue(120), "price": attrs.DoubleValue(9.5),
		"vip": attrs.BoolValue(true), "tags": attrs.KeywordListValue("a", "b"),
		"due": attrs.TimeValue(time.Date(2025, 1, 31, 8, 0, 0, 123456000, time.UTC)), "region": {}}
	if !got.Equal(want) {
		t.Fatalf("Convert = %v, want %v", got, want)
	}
	for _, st := range []*structpb.Struct{nil, {}} {
		if set, err := testSchema.Convert(st); set != nil || err != nil {
			t.Errorf("Convert(%v) = %v, %v; want nil, nil", st, set, err)
		}
	}
	// Numbers at the edges of int and double.
	edges, err := testSchema.Convert(mustStruct(t, map[string]any{"amount": -attrs.MaxInt, "price": math.Copysign(0, -1)}))
	if err != nil || edges["amount"].AsInt() != -attrs.MaxInt || math.Signbit(edges["price"].AsDouble()) {
		t.Errorf("Convert of edges = %v, %v", edges, err)
	}
}

// TestConvertErrors: a value of the wrong type, too large, undeclared:
// an *AttributeError, and nothing converted.
func TestConvertErrors(t *testing.T) {
	str := structpb.NewStringValue
	num := structpb.NewNumberValue
	list := func(vs ...*structpb.Value) *structpb.Value {
		return structpb.NewListValue(&structpb.ListValue{Values: vs})
	}
	strs := func(n int) *structpb.Value {
		vs := make([]*structpb.Value, n)
		for i := range vs {
			vs[i] = str("x")
		}
		return list(vs...)
	}
	for _, tc := range []struct {
		fields map[string]*structpb.Value
		msg    string
	}{
		{map[string]*structpb.Value{"amount": str("x")}, `attribute "amount": want int, got string "x"`},
		{map[string]*structpb.Value{"amount": num(1.5)}, `attribute "amount": want int, got number 1.5`},
		{map[string]*structpb.Value{"amount": num(1 << 53)}, `attribute "amount": int 9007199254740992 out of range ±9007199254740991`},
		{map[string]*structpb.Value{"amount": num(-1e300)}, `attribute "amount": int -1e+300 out of range ±9007199254740991`},
		{map[string]*structpb.Value{"amount": num(math.Inf(1))}, `attribute "amount": want int, got +Inf`},
		{map[string]*structpb.Value{"amount": structpb.NewBoolValue(true)}, `attribute "amount": want int, got bool true`},
		{map[string]*structpb.Value{"price": num(math.NaN())}, `attribute "price": want double, got NaN`},
		{map[string]*structpb.Value{"price": num(math.Inf(-1))}, `attribute "price": want double, got -Inf`},
		{map[string]*structpb.Value{"price": str("1.5")}, `attribute "price": want double, got string "1.5"`},
		{map[string]*structpb.Value{"vip": str("true")}, `attribute "vip": want bool, got string "true"`},
		{map[string]*structpb.Value{"customer": num(1)}, `attribute "customer": want string, got number 1`},
		{map[string]*structpb.Value{"customer": list()}, `attribute "customer": want string, got a list`},
		{map[string]*structpb.Value{"customer": structpb.NewStructValue(&structpb.Struct{})}, `attribute "customer": want string, got an object`},
		{map[string]*structpb.Value{"customer": str(strings.Repeat("x", 257))}, `attribute "customer": a string is at most 256 bytes, not 257`},
		{map[string]*structpb.Value{"customer": str("a\xff")}, `attribute "customer": a string is valid UTF-8`},
		{map[string]*structpb.Value{"customer": str("a\x00")}, `attribute "customer": a string cannot contain NUL (PostgreSQL's text cannot)`},
		{map[string]*structpb.Value{"tags": str("a")}, `attribute "tags": want keyword_list (a list of strings), got string "a"`},
		{map[string]*structpb.Value{"tags": list(str("a"), num(1))}, `attribute "tags": want keyword_list (a list of strings), got number 1 as item 2`},
		{map[string]*structpb.Value{"tags": strs(33)}, `attribute "tags": a keyword_list has at most 32 items, not 33`},
		{map[string]*structpb.Value{"tags": list(str(strings.Repeat("x", 257)))}, `attribute "tags": item 1: a string is at most 256 bytes, not 257`},
		{map[string]*structpb.Value{"due": str("tomorrow")}, `attribute "due": want time (an RFC 3339 string such as "2025-01-31T09:00:00Z"), got string "tomorrow"`},
		{map[string]*structpb.Value{"due": num(1738314000)}, `attribute "due": want time (an RFC 3339 string such as "2025-01-31T09:00:00Z"), got number 1738314000`},
		{map[string]*structpb.Value{"due": str(strings.Repeat("é", 30))}, `attribute "due": want time (an RFC 3339 string such as "2025-01-31T09:00:00Z"), got string "` + strings.Repeat("é", 20) + `…"`},
		{map[string]*structpb.Value{"nope": str("x")}, `attribute "nope": not declared by the workflow`},
		{map[string]*structpb.Value{"vip": str("x"), "amount": str("x"), "zzz": str("x")}, `attribute "amount": want int, got string "x"`},
	} {
		set, err := testSchema.Convert(&structpb.Struct{Fields: tc.fields})
		var ae *attrs.AttributeError
		if set != nil || !errors.As(err, &ae) || !errors.Is(err, attrs.ErrInvalid) || err.Error() != tc.msg {
			t.Errorf("Convert(%v) = %v, %v\n want %s", tc.fields, set, err, tc.msg)
		}
	}
}

// TestStructRoundTrip: Set.Struct is what Convert reads back.
func TestStructRoundTrip(t *testing.T) {
	set := attrs.Set{"customer": attrs.StringValue("acme"), "amount": attrs.IntValue(-attrs.MaxInt), "price": attrs.DoubleValue(0.1),
		"vip": attrs.BoolValue(false), "tags": attrs.KeywordListValue(), "due": attrs.TimeValue(time.Date(1, 2, 3, 4, 5, 6, 7000, time.UTC))}
	st := set.Struct()
	if got := st.Fields["due"].GetStringValue(); got != "0001-02-03T04:05:06.000007Z" {
		t.Errorf("due as %q", got)
	}
	back, err := testSchema.Convert(st)
	if err != nil || !back.Equal(set) {
		t.Fatalf("Convert(Struct()) = %v, %v; want %v", back, err, set)
	}
	if (attrs.Value{}).Proto().GetKind().(*structpb.Value_NullValue) == nil {
		t.Fatalf("null is not NullValue")
	}
}

// TestMerge: an update replaces values and deletes with null; its inputs
// do not change.
func TestMerge(t *testing.T) {
	old := attrs.Set{"a": attrs.IntValue(1), "b": attrs.IntValue(2)}
	update := attrs.Set{"b": {}, "c": attrs.IntValue(3), "a": attrs.StringValue("x")}
	got := attrs.Merge(old, update)
	if want := (attrs.Set{"a": attrs.StringValue("x"), "c": attrs.IntValue(3)}); !got.Equal(want) {
		t.Fatalf("Merge = %v, want %v", got, want)
	}
	if len(old) != 2 || !old["a"].Equal(attrs.IntValue(1)) || len(update) != 3 {
		t.Fatalf("Merge changed its inputs: %v, %v", old, update)
	}
	for _, tc := range []struct{ old, update attrs.Set }{
		{nil, nil}, {attrs.Set{"a": attrs.IntValue(1)}, attrs.Set{"a": {}}}, {nil, attrs.Set{"a": {}}},
	} {
		if got := attrs.Merge(tc.old, tc.update); got != nil {
			t.Errorf("Merge(%v, %v) = %v, want nil", tc.old, tc.update, got)
		}
	}
	if got := attrs.Merge(nil, attrs.Set{"a": {}, "b": attrs.BoolValue(true)}); !got.Equal(attrs.Set{"b": attrs.BoolValue(true)}) {
		t.Errorf("Merge(nil, start) = %v: nulls not dropped", got)
	}
}
