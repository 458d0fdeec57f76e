package attrs_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/wfd-dev/wfd/attrs"
)

// TestParseSchema: declarations, name rules, types and the limit.
func TestParseSchema(t *testing.T) {
	decl := map[string]string{"customer": "string", "tags": "keyword_list", "amount": "int", "price": "double",
		"vip": "bool", "due": "time", "a": "int", strings.Repeat("x", 64): "string", "a1_b2": "string", "order_id": "string"}
	s, err := attrs.ParseSchema(decl)
	if err != nil {
		t.Fatalf("ParseSchema: %v", err)
	}
	if s["tags"] != attrs.KeywordList || s["due"] != attrs.Time || len(s) != len(decl) {
		t.Fatalf("ParseSchema = %v", s)
	}
	if got := s.Declarations(); !maps.Equal(got, decl) {
		t.Fatalf("Declarations() = %v, want %v", got, decl)
	}
	for _, tc := range []struct {
		decl map[string]string
		msg  string
	}{
		{map[string]string{"Customer": "string"}, `attribute "Customer": a name is a lowercase letter, then lowercase letters, digits and underscores`},
		{map[string]string{"1a": "string"}, `attribute "1a": a name is a lowercase letter, then lowercase letters, digits and underscores`},
		{map[string]string{"_a": "string"}, `attribute "_a": a name is a lowercase letter, then lowercase letters, digits and underscores`},
		{map[string]string{"a-b": "string"}, `attribute "a-b": a name is a lowercase letter, then lowercase letters, digits and underscores`},
		{map[string]string{"é": "string"}, `attribute "é": a name is a lowercase letter, then lowercase letters, digits and underscores`},
		{map[string]string{"": "string"}, `attribute "": a name is 1 to 64 bytes`},
		{map[string]string{strings.Repeat("x", 65): "string"}, fmt.Sprintf("attribute %q: a name is 1 to 64 bytes", strings.Repeat("x", 65))},
		{map[string]string{"and": "string"}, `attribute "and": a word of the query language cannot be a name`},
		{map[string]string{"between": "int"}, `attribute "between": a word of the query language cannot be a name`},
		{map[string]string{"status": "string"}, `attribute "status": a built-in field's name (or one kept for built-in fields) cannot be a name`},
		{map[string]string{"handler_id": "string"}, `attribute "handler_id": a built-in field's name (or one kept for built-in fields) cannot be a name`},
		{map[string]string{"wfd_x": "string"}, `attribute "wfd_x": names starting with "wfd_" are kept for built-in fields`},
		{map[string]string{"a": "keyword"}, `attribute "a": unknown type "keyword" (want string, keyword_list, int, double, bool or time)`},
		{map[string]string{"a": "String"}, `attribute "a": unknown type "String" (want string, keyword_list, int, double, bool or time)`},
		{map[string]string{"b": "int", "a": "text"}, `attribute "a": unknown type "text" (want string, keyword_list, int, double, bool or time)`},
		{manyNames(attrs.MaxAttributes + 1), "invalid search attributes: a workflow declares at most 32 search attributes, not 33"},
	} {
		_, err := attrs.ParseSchema(tc.decl)
		var ae *attrs.AttributeError
		if !errors.Is(err, attrs.ErrInvalid) || err.Error() != tc.msg || errors.As(err, &ae) != strings.HasPrefix(tc.msg, "attribute ") {
			t.Errorf("ParseSchema(%v) = %v, want %s", tc.decl, err, tc.msg)
		}
	}
	if _, err := attrs.ParseSchema(manyNames(attrs.MaxAttributes)); err != nil {
		t.Errorf("ParseSchema of %d attributes: %v", attrs.MaxAttributes, err)
	}
	if err := (attrs.Schema{"a": 0}).Validate(); err == nil || err.Error() != `attribute "a": unknown type null` {
		t.Errorf("Validate of type 0 = %v", err)
	}
}

func manyNames(n int) map[string]string {
	decl := map[string]string{}
	for i := range n {
		decl[fmt.Sprintf("a%d", i)] = "int"
	}
	return decl
}

// TestTypeNames: every type's name reads back.
func TestTypeNames(t *testing.T) {
	for typ := attrs.String; typ <= attrs.Time; typ++ {
		if got, err := attrs.ParseType(typ.String()); err != nil || got != typ || !typ.Valid() {
			t.Errorf("ParseType(%q) = %v, %v", typ.String(), got, err)
		}
	}
	if _, err := attrs.ParseType("text"); !errors.Is(err, attrs.ErrInvalid) ||
		err.Error() != `invalid search attributes: unknown type "text" (want string, keyword_list, int, double, bool or time)` {
		t.Errorf("ParseType(text) = %v", err)
	}
	if attrs.Type(0).Valid() || attrs.Type(7).Valid() || attrs.Type(7).String() != "Type(7)" {
		t.Errorf("types 0 and 7 are not types")
	}
}

// TestCheckSet: typed sets built in Go.
func TestCheckSet(t *testing.T) {
	ok := attrs.Set{"customer": attrs.StringValue("acme"), "amount": attrs.IntValue(attrs.MaxInt), "tags": attrs.KeywordListValue(),
		"region": {}} // null: a deletion, in an update
	if err := testSchema.CheckSet(ok); err != nil {
		t.Errorf("CheckSet(%v): %v", ok, err)
	}
	for _, tc := range []struct {
		set attrs.Set
		msg string
	}{
		{attrs.Set{"nope": attrs.IntValue(1)}, `attribute "nope": not declared by the workflow`},
		{attrs.Set{"amount": attrs.StringValue("1")}, `attribute "amount": want int, got string "1"`},
		{attrs.Set{"amount": attrs.IntValue(attrs.MaxInt + 1)}, `attribute "amount": int 9007199254740992 out of range ±9007199254740991`},
		{attrs.Set{"customer": attrs.StringValue(strings.Repeat("x", 257))}, `attribute "customer": a string is at most 256 bytes, not 257`},
		{attrs.Set{"customer": attrs.StringValue("a\xffb")}, `attribute "customer": a string is valid UTF-8`},
		{attrs.Set{"customer": attrs.StringValue("a\x00b")}, `attribute "customer": a string cannot contain NUL (PostgreSQL's text cannot)`},
		{attrs.Set{"tags": attrs.KeywordListValue(make([]string, 33)...)}, `attribute "tags": a keyword_list has at most 32 items, not 33`},
		{attrs.Set{"tags": attrs.KeywordListValue("a", strings.Repeat("é", 129))}, `attribute "tags": item 2: a string is at most 256 bytes, not 258`},
		{attrs.Set{"price": attrs.DoubleValue(nan())}, `attribute "price": a double is finite, not NaN`},
		{attrs.Set{"due": attrs.TimeValue(day(1).AddDate(8000, 0, 0))}, `attribute "due": a time is in the years 0000 to 9999`},
		{attrs.Set{"vip": attrs.BoolValue(true), "amount": attrs.DoubleValue(1)}, `attribute "amount": want int, got double 1.0`},
	} {
		err := testSchema.CheckSet(tc.set)
		if !errors.Is(err, attrs.ErrInvalid) || err.Error() != tc.msg {
			t.Errorf("CheckSet(%v) = %v, want %s", tc.set, err, tc.msg)
		}
	}
}
