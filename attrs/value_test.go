package attrs_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/attrs"
)

// TestValue: constructors, accessors and String.
func TestValue(t *testing.T) {
	items := []string{"a", "b"}
	list := attrs.KeywordListValue(items...)
	items[0] = "changed"
	got := list.AsList()
	got[1] = "changed"
	if !slices.Equal(list.AsList(), []string{"a", "b"}) {
		t.Fatalf("a keyword_list shares its items: %v", list.AsList())
	}
	tm := time.Date(2025, 1, 31, 9, 0, 0, 123456789, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		v    attrs.Value
		typ  attrs.Type
		str  string
		same bool // the accessor returns what was given
	}{
		{attrs.StringValue("a\"b\n"), attrs.String, `"a\"b\n"`, attrs.StringValue("a\"b\n").AsString() == "a\"b\n"},
		{list, attrs.KeywordList, `["a", "b"]`, true},
		{attrs.KeywordListValue(), attrs.KeywordList, `[]`, len(attrs.KeywordListValue().AsList()) == 0},
		{attrs.IntValue(-42), attrs.Int, `-42`, attrs.IntValue(-42).AsInt() == -42},
		{attrs.DoubleValue(2), attrs.Double, `2.0`, attrs.DoubleValue(2).AsDouble() == 2},
		{attrs.DoubleValue(math.Copysign(0, -1)), attrs.Double, `0.0`, !math.Signbit(attrs.DoubleValue(math.Copysign(0, -1)).AsDouble())},
		{attrs.BoolValue(true), attrs.Bool, `true`, attrs.BoolValue(true).AsBool()},
		{attrs.BoolValue(false), attrs.Bool, `false`, !attrs.BoolValue(false).AsBool()},
		{attrs.TimeValue(tm), attrs.Time, `"2025-01-31T08:00:00.123456Z"`,
			attrs.TimeValue(tm).AsTime().Equal(time.Date(2025, 1, 31, 8, 0, 0, 123456000, time.UTC)) && attrs.TimeValue(tm).AsTime().Location() == time.UTC},
		{attrs.TimeValue(time.Date(-1, 12, 31, 23, 59, 59, 999, time.UTC)), attrs.Time, `"-0001-12-31T23:59:59Z"`, true},
		{attrs.Value{}, 0, `null`, attrs.Value{}.IsNull()},
	} {
		if tc.v.Type() != tc.typ || tc.v.String() != tc.str || !tc.same {
			t.Errorf("%v: type %v, String %q, accessor ok %v; want %v, %q", tc.v, tc.v.Type(), tc.v.String(), tc.same, tc.typ, tc.str)
		}
	}
	// Accessors of other types return zero values.
	s := attrs.StringValue("x")
	if s.AsInt() != 0 || s.AsDouble() != 0 || s.AsBool() || !s.AsTime().IsZero() || s.AsList() != nil || attrs.IntValue(1).AsString() != "" {
		t.Errorf("accessors of another type are not zero")
	}
	if !attrs.IntValue(3).Equal(attrs.IntValue(3)) || attrs.IntValue(3).Equal(attrs.DoubleValue(3)) {
		t.Errorf("Equal compares types and values")
	}
}

// orderedValues are valid values in increasing order (Value.Compare): by
// type, then by value.
func orderedValues() []attrs.Value {
	return []attrs.Value{
		{},
		attrs.StringValue(""), attrs.StringValue("\x01"), attrs.StringValue("A"), attrs.StringValue("a"), attrs.StringValue("a\x01"),
		attrs.StringValue("ab"), attrs.StringValue("b"), attrs.StringValue("é"), attrs.StringValue("日本"),
		attrs.KeywordListValue(), attrs.KeywordListValue(""), attrs.KeywordListValue("", "a"), attrs.KeywordListValue("a"),
		attrs.KeywordListValue("a", ""), attrs.KeywordListValue("a", "b"), attrs.KeywordListValue("ab"), attrs.KeywordListValue("b"),
		attrs.IntValue(-attrs.MaxInt), attrs.IntValue(-1), attrs.IntValue(0), attrs.IntValue(1), attrs.IntValue(attrs.MaxInt),
		attrs.DoubleValue(-math.MaxFloat64), attrs.DoubleValue(-1), attrs.DoubleValue(-math.SmallestNonzeroFloat64), attrs.DoubleValue(0),
		attrs.DoubleValue(math.SmallestNonzeroFloat64), attrs.DoubleValue(0.5), attrs.DoubleValue(1), attrs.DoubleValue(math.MaxFloat64),
		attrs.BoolValue(false), attrs.BoolValue(true),
		attrs.TimeValue(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)), attrs.TimeValue(time.Unix(-1, 0)), attrs.TimeValue(time.Unix(0, 0)),
		attrs.TimeValue(time.Unix(0, 1000)), attrs.TimeValue(time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)),
	}
}

// TestCompare: Value.Compare is the total order of orderedValues.
func TestCompare(t *testing.T) {
	vs := orderedValues()
	for i, v := range vs {
		for j, w := range vs {
			if got, want := v.Compare(w), cmpInt(i, j); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", v, w, got, want)
			}
		}
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
