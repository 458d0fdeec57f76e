package attrs_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wfd-dev/wfd/attrs"
)

// fullSet has one attribute of each type.
func fullSet() attrs.Set {
	return attrs.Set{"customer": attrs.StringValue("acme"), "tags": attrs.KeywordListValue("a", ""), "amount": attrs.IntValue(-2),
		"price": attrs.DoubleValue(1.5), "vip": attrs.BoolValue(true), "due": attrs.TimeValue(time.Unix(1, 5000))}
}

// TestEncodeGolden pins the stored form: changing it needs a new version.
func TestEncodeGolden(t *testing.T) {
	b, err := attrs.Encode(fullSet())
	if err != nil {
		t.Fatal(err)
	}
	const want = "01" + "06" + // version, count
		"06616d6f756e74" + "03" + "03" + // amount int -2 (zig-zag 3)
		"08637573746f6d6572" + "01" + "0461636d65" + // customer string "acme"
		"03647565" + "06" + "8a897a" + // due time 1000005 µs (zig-zag 2000010)
		"057072696365" + "04" + "3ff8000000000000" + // price double 1.5
		"0474616773" + "02" + "02" + "0161" + "00" + // tags keyword_list ["a", ""]
		"03766970" + "05" + "01" // vip bool true
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("Encode = %s\n   want %s", got, want)
	}
	back, err := attrs.Decode(b)
	if err != nil || !back.Equal(fullSet()) {
		t.Fatalf("Decode = %v, %v", back, err)
	}
}

// TestEncodeRoundTrip: sets at the limits round-trip, and the empty set
// is nil.
func TestEncodeRoundTrip(t *testing.T) {
	long := strings.Repeat("é", attrs.MaxStringBytes/2)
	items := make([]string, attrs.MaxListItems)
	for i := range items {
		items[i] = long
	}
	big := attrs.Set{}
	for i := range attrs.MaxAttributes - 4 {
		big[strings.Repeat("x", 60)+string(rune('a'+i%26))+string(rune('a'+i/26))] = attrs.IntValue(int64(i))
	}
	big["s"], big["l"] = attrs.StringValue(long), attrs.KeywordListValue(items...)
	big["t"] = attrs.TimeValue(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC))
	big["u"] = attrs.TimeValue(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, s := range []attrs.Set{fullSet(), big, {"a": attrs.DoubleValue(-math.MaxFloat64)}, {"a": attrs.IntValue(attrs.MaxInt)}} {
		b, err := attrs.Encode(s)
		if err != nil {
			t.Fatalf("Encode(%v): %v", s, err)
		}
		back, err := attrs.Decode(b)
		if err != nil || !back.Equal(s) {
			t.Fatalf("Decode(Encode(%v)) = %v, %v", s, back, err)
		}
	}
	for _, s := range []attrs.Set{nil, {}} {
		if b, err := attrs.Encode(s); b != nil || err != nil {
			t.Errorf("Encode(%v) = %x, %v; want nil", s, b, err)
		}
	}
	for _, b := range [][]byte{nil, {}} {
		if s, err := attrs.Decode(b); s != nil || err != nil {
			t.Errorf("Decode(%x) = %v, %v; want nil", b, s, err)
		}
	}
}

// TestEncodeErrors: Encode refuses what Convert could not produce.
func TestEncodeErrors(t *testing.T) {
	many := attrs.Set{}
	for i := range attrs.MaxAttributes + 1 {
		many[string(rune('a'+i%26))+string(rune('a'+i/26))] = attrs.IntValue(1)
	}
	for _, tc := range []struct {
		s   attrs.Set
		msg string
	}{
		{attrs.Set{"a": {}}, `attribute "a": null is not a value`},
		{attrs.Set{"A": attrs.IntValue(1)}, `attribute "A": a name is a lowercase letter, then lowercase letters, digits and underscores`},
		{attrs.Set{"a": attrs.DoubleValue(math.Inf(1))}, `attribute "a": a double is finite, not +Inf`},
		{many, "invalid search attributes: at most 32 attributes, not 33"},
	} {
		b, err := attrs.Encode(tc.s)
		if b != nil || !errors.Is(err, attrs.ErrInvalid) || err.Error() != tc.msg {
			t.Errorf("Encode(%v) = %x, %v; want %s", tc.s, b, err, tc.msg)
		}
	}
}

// TestDecodeErrors: anything but an encoding Encode writes is refused,
// and not as ErrInvalid.
func TestDecodeErrors(t *testing.T) {
	valid, _ := attrs.Encode(attrs.Set{"a": attrs.IntValue(1), "b": attrs.StringValue("x")}) // 01 02 0161 03 02 0162 01 0178
	mod := func(hexs string) []byte {
		b, err := hex.DecodeString(hexs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		b   []byte
		msg string
	}{
		{mod("02"), "attrs: decode: unknown version 2"},
		{mod("01"), "attrs: decode: bad uvarint"},
		{mod("0100"), "attrs: decode: 0 attributes"},
		{mod("0121"), "attrs: decode: 33 attributes"},
		{mod("01ffffffffffffffffffff01"), "attrs: decode: bad uvarint"},
		{valid[:len(valid)-1], "attrs: decode: truncated: 1 bytes wanted, 0 left"},
		{append(bytes.Clone(valid), 0), "attrs: decode: 1 bytes after the last attribute"},
		{mod("0102016201017801610302"), "attrs: decode: not in canonical form"}, // b before a
		{mod("01020161030201610302"), `attrs: decode: attribute "a" twice`},
		{mod("010101610380"), "attrs: decode: bad varint"},
		{mod("01010161038000"), "attrs: decode: not in canonical form"}, // overlong varint 0
		{mod("0101016107"), "attrs: decode: unknown type 7"},
		{mod("0101016100"), "attrs: decode: unknown type 0"},
		{mod("0101016106" + "8080808080808080808001"), "attrs: decode: bad varint"}, // a time of 11 bytes
		{mod("0101016104" + "8000000000000000"), "attrs: decode: " + `attribute "a": a double is 0, not -0`},
		{mod("0101016104fff8000000000000"), "attrs: decode: " + `attribute "a": a double is finite, not NaN`},
		{mod("0101016105"), "attrs: decode: truncated: 1 bytes wanted, 0 left"},
		{mod("010101610502"), "attrs: decode: " + `attribute "a": a bool is true or false`},
		{mod("0101014103" + "02"), "attrs: decode: " + `attribute "A": a name is a lowercase letter, then lowercase letters, digits and underscores`},
		{mod("0101016103" + "8080808080808020"), "attrs: decode: " + `attribute "a": int 9007199254740992 out of range ±9007199254740991`},
		{mod("0101016101" + "0261"), "attrs: decode: truncated: 2 bytes wanted, 1 left"},
		{mod("0101016101" + "0261ff"), "attrs: decode: " + `attribute "a": a string is valid UTF-8`},
		{mod("0101016101" + "8102"), "attrs: decode: a string of 257 bytes"},
		{mod("0101016102" + "21"), "attrs: decode: a keyword_list of 33 items"},
	} {
		s, err := attrs.Decode(tc.b)
		if s != nil || err == nil || errors.Is(err, attrs.ErrInvalid) || err.Error() != tc.msg {
			t.Errorf("Decode(%x) = %v, %v; want %s (not ErrInvalid)", tc.b, s, err, tc.msg)
		}
	}
}

// FuzzDecode: Decode never panics, refuses without ErrInvalid, and what
// it takes is a Set Encode writes the same bytes for, valid for a schema
// of its own types, that round-trips through the API's form.
func FuzzDecode(f *testing.F) {
	for _, s := range []attrs.Set{fullSet(), {"a": attrs.IntValue(1), "b": attrs.StringValue("x")}, {"t": attrs.KeywordListValue()},
		{"d": attrs.DoubleValue(-1e-300)}} {
		b, err := attrs.Encode(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0})
	f.Add([]byte{1, 1, 1, 'a', 4, 0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := attrs.Decode(b)
		if err != nil {
			if s != nil || errors.Is(err, attrs.ErrInvalid) {
				t.Fatalf("Decode(%x) = %v, %v", b, s, err)
			}
			return
		}
		again, err := attrs.Encode(s)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("Encode(Decode(%x)) = %x, %v", b, again, err)
		}
		schema := attrs.Schema{}
		for name, v := range s {
			schema[name] = v.Type()
		}
		if err := schema.Validate(); err != nil {
			t.Fatalf("Decode(%x) = %v: names %v", b, s, err)
		}
		if err := schema.CheckSet(s); err != nil {
			t.Fatalf("Decode(%x) = %v: %v", b, s, err)
		}
		back, err := schema.Convert(s.Struct())
		if err != nil || !back.Equal(s) {
			t.Fatalf("Convert(Struct(%v)) = %v, %v", s, back, err)
		}
	})
}
