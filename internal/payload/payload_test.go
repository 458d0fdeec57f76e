package payload_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/payload"
)

func obj(fields map[string]*structpb.Value) *structpb.Struct { return &structpb.Struct{Fields: fields} }

func list(vs ...*structpb.Value) *structpb.Value {
	return structpb.NewListValue(&structpb.ListValue{Values: vs})
}

// nested returns an object nested depth levels deep ({"a": {"a": ...}}).
func nested(depth int) *structpb.Struct {
	s := obj(nil)
	for range depth - 1 {
		s = obj(map[string]*structpb.Value{"a": structpb.NewStructValue(s)})
	}
	return s
}

func TestCheck(t *testing.T) {
	num := structpb.NewNumberValue
	cases := []struct {
		name string
		s    *structpb.Struct
		lim  payload.Limits
		want string // "" for valid
	}{
		{"nil", nil, payload.Limits{}, ""},
		{"plain", obj(map[string]*structpb.Value{"x": num(1), "s": structpb.NewStringValue("é"), "l": list(structpb.NewNullValue())}), payload.Limits{}, ""},
		{"nil struct and list values are empty", obj(map[string]*structpb.Value{"o": {Kind: &structpb.Value_StructValue{}}, "l": {Kind: &structpb.Value_ListValue{}}}), payload.Limits{}, ""},
		{"NaN in a list", obj(map[string]*structpb.Value{"items": list(num(0), num(1), num(2), structpb.NewStructValue(obj(map[string]*structpb.Value{"x": num(math.NaN())})))}), payload.Limits{},
			"input.items[3].x: NaN is not allowed"},
		{"+Inf", obj(map[string]*structpb.Value{"x": num(math.Inf(1))}), payload.Limits{}, "input.x: Infinity is not allowed"},
		{"-Inf", obj(map[string]*structpb.Value{"x": num(math.Inf(-1))}), payload.Limits{}, "input.x: -Infinity is not allowed"},
		{"no kind", obj(map[string]*structpb.Value{"x": {}}), payload.Limits{}, "input.x: value has no kind"},
		{"nil value", obj(map[string]*structpb.Value{"odd key": nil}), payload.Limits{}, `input["odd key"]: value has no kind`},
		{"nil list item", obj(map[string]*structpb.Value{"l": list(nil)}), payload.Limits{}, "input.l[0]: value has no kind"},
		{"bad UTF-8 string", obj(map[string]*structpb.Value{"s": structpb.NewStringValue("a\xffb")}), payload.Limits{}, "input.s: string is not valid UTF-8"},
		{"bad UTF-8 key", obj(map[string]*structpb.Value{"\xff": structpb.NewNullValue()}), payload.Limits{}, `input["\xff"]: field name is not valid UTF-8`},
		{"at the depth limit", nested(4), payload.Limits{MaxDepth: 4}, ""},
		{"past the depth limit", nested(5), payload.Limits{MaxDepth: 4}, "input.a.a.a.a: nested deeper than 4 levels"},
		{"lists nest too", obj(map[string]*structpb.Value{"l": list(list(list()))}), payload.Limits{MaxDepth: 3}, "input.l[0][0]: nested deeper than 3 levels"},
		{"default depth", nested(payload.DefaultMaxDepth + 1), payload.Limits{}, "nested deeper than 32 levels"},
		{"too large", obj(map[string]*structpb.Value{"s": structpb.NewStringValue(strings.Repeat("x", 100))}), payload.Limits{MaxBytes: 64}, "input: encodes to 109 bytes, over the limit of 64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := payload.Check(c.lim, "input", c.s)
			if c.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Check = %v, want %q", err, c.want)
			}
			if !errors.Is(err, payload.ErrInvalid) {
				t.Fatalf("%v is not ErrInvalid", err)
			}
		})
	}
}

func TestCheckValue(t *testing.T) {
	if err := payload.CheckValue(payload.Limits{}, "value", structpb.NewNumberValue(math.NaN())); err == nil || err.Error() != "value: NaN is not allowed (JSON has no NaN)" {
		t.Fatalf("CheckValue(NaN) = %v", err)
	}
	if err := payload.CheckValue(payload.Limits{}, "value", nil); err == nil {
		t.Fatal("CheckValue(nil) passed")
	}
	if err := payload.CheckValue(payload.Limits{MaxDepth: 2}, "value", list(list())); err != nil {
		t.Fatalf("CheckValue([[]], depth 2) = %v", err)
	}
	if err := payload.CheckValue(payload.Limits{MaxDepth: 1}, "value", list(list())); err == nil {
		t.Fatal("CheckValue([[]], depth 1) passed")
	}
}

func TestSanitize(t *testing.T) {
	num := structpb.NewNumberValue
	clean := obj(map[string]*structpb.Value{"x": num(1), "l": list(structpb.NewStringValue("a"))})
	if got := payload.Sanitize(clean); got != clean {
		t.Fatal("Sanitize copied a clean payload")
	}
	if payload.Sanitize(nil) != nil {
		t.Fatal("Sanitize(nil) is not nil")
	}
	bad := obj(map[string]*structpb.Value{
		"nan": num(math.NaN()), "inf": num(math.Inf(1)), "ninf": num(math.Inf(-1)), "none": {}, "nil": nil,
		"s": structpb.NewStringValue("a\xffb"), "a\xff": num(2),
		"deep": structpb.NewStructValue(obj(map[string]*structpb.Value{"l": list(num(3), nil)})),
		"ok":   structpb.NewStringValue("kept"),
	})
	before := proto.Clone(bad)
	got := payload.Sanitize(bad)
	if !proto.Equal(bad, before) {
		t.Fatal("Sanitize changed its argument")
	}
	b, err := protojson.Marshal(got)
	if err != nil {
		t.Fatalf("sanitized payload does not marshal: %v", err)
	}
	if err := protojson.Unmarshal(b, obj(nil)); err != nil {
		t.Fatal(err)
	}
	back := got.AsMap()
	want := map[string]any{
		"nan": "NaN", "inf": "Infinity", "ninf": "-Infinity", "none": nil, "nil": nil, "s": "a\uFFFDb", "a\uFFFD": 2.0,
		"deep": map[string]any{"l": []any{3.0, nil}}, "ok": "kept",
	}
	for k, v := range want {
		if !equalJSON(back[k], v) {
			t.Errorf("%q: got %#v, want %#v", k, back[k], v)
		}
	}
	if err := payload.Check(payload.Limits{}, "out", got); err != nil {
		t.Fatalf("sanitized payload fails Check: %v", err)
	}
	if v := payload.SanitizeValue(nil); v.GetKind() == nil {
		t.Fatal("SanitizeValue(nil) has no kind")
	}
}

func equalJSON(a, b any) bool {
	x, _ := structpb.NewValue(a)
	y, _ := structpb.NewValue(b)
	return proto.Equal(x, y)
}
