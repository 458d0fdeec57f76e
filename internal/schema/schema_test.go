package schema_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/schema"
)

const answer = `{
	"type": "object",
	"required": ["approved"],
	"properties": {
		"approved": {"type": "boolean"},
		"reason": {"type": "string"},
		"n": {"type": "integer", "minimum": 0, "maximum": 10},
		"items": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "number"}}}}
	},
	"if": {"properties": {"approved": {"const": false}}},
	"then": {"required": ["reason"]},
	"additionalProperties": false
}`

func mustCompile(t *testing.T, raw string) *schema.Schema {
	t.Helper()
	s, err := schema.Compile([]byte(raw))
	if err != nil {
		t.Fatalf("Compile(%s): %v", raw, err)
	}
	return s
}

func obj(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestValidate(t *testing.T) {
	s := mustCompile(t, answer)
	tests := []struct {
		name string
		in   map[string]any
		want []string // the problems, in order; none: valid
	}{
		{"valid", map[string]any{"approved": true}, nil},
		{"valid with a reason", map[string]any{"approved": false, "reason": "no", "n": 3.0}, nil},
		{"whole float is an integer", map[string]any{"approved": true, "n": 10.0}, nil},
		// Without "approved" the "if" holds (its "properties" have nothing to
		// check), so "then" wants a reason too.
		{"missing", map[string]any{}, []string{"at '': missing property 'approved'", "at '': missing property 'reason'"}},
		{"conditional", map[string]any{"approved": false}, []string{"at '': missing property 'reason'"}},
		{"several, sorted by location", map[string]any{
			"approved": "yes", "n": 3.5, "extra": 1.0, "items": []any{map[string]any{"x": "a"}},
		}, []string{
			"at '': additional properties 'extra' not allowed",
			"at '/approved': got string, want boolean",
			"at '/items/0/x': got string, want number",
			"at '/n': got number, want integer",
		}},
		{"bounds", map[string]any{"approved": true, "n": 11.0}, []string{"at '/n': maximum: got 11, want <= 10"}},
		// Numbers as Go prints them, not as the library's English printer
		// does ("1×10⁰⁹", "1,000").
		{"big bound", map[string]any{"approved": true, "n": 1e9}, []string{"at '/n': maximum: got 1e+09, want <= 10"}},
		{"escaped pointer", map[string]any{"approved": true, "items": []any{map[string]any{"x": "a"}}, "a/b~'c": 1.0}, []string{
			`at '': additional properties 'a/b~\'c' not allowed`,
			"at '/items/0/x': got string, want number",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The library finds failures in map order: the message must
			// not depend on it.
			for range 20 {
				err := s.Validate(obj(t, tt.in))
				if tt.want == nil {
					if err != nil {
						t.Fatalf("Validate: %v", err)
					}
					return
				}
				var se *schema.Error
				if !errors.As(err, &se) {
					t.Fatalf("Validate: %v (%T), want a *schema.Error", err, err)
				}
				if got := strings.Join(se.Problems, "\n"); got != strings.Join(tt.want, "\n") {
					t.Fatalf("problems:\n%s\nwant:\n%s", got, strings.Join(tt.want, "\n"))
				}
				if err.Error() != strings.Join(tt.want, "; ") {
					t.Fatalf("Error() = %q", err.Error())
				}
			}
		})
	}
}

func TestValidatePlainNumbers(t *testing.T) {
	s := mustCompile(t, `{"properties": {"n": {"minimum": 1000, "multipleOf": 0.5}, "s": {"maxLength": 1000}, "l": {"minItems": 2000}, "o": {"maxProperties": 1000}}}`)
	long := strings.Repeat("x", 1001)
	fields := map[string]any{}
	for i := range 1001 {
		fields[strings.Repeat("k", i+1)] = 1.0
	}
	err := s.Validate(obj(t, map[string]any{"n": 0.25, "s": long, "l": []any{1.0}, "o": fields}))
	want := "at '/l': minItems: got 1, want >= 2000; at '/n': minimum: got 0.25, want >= 1000; at '/n': multipleOf: got 0.25, want a multiple of 0.5; " +
		"at '/o': maxProperties: got 1001, want <= 1000; at '/s': maxLength: got 1001, want <= 1000"
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v\nwant %s", err, want)
	}
}

// TestValidateBoundsSayTheRelation: an exclusive bound's failure says
// which side the value must be on ("got 0, want > 0"), not "got 0, want
// 0" (issue 28).
func TestValidateBoundsSayTheRelation(t *testing.T) {
	s := mustCompile(t, `{"properties": {"a": {"exclusiveMinimum": 0}, "b": {"exclusiveMaximum": 5}, "c": {"minimum": 1}, "d": {"maximum": 2}}}`)
	for _, tc := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"a": 0.0}, "at '/a': exclusiveMinimum: got 0, want > 0"},
		{map[string]any{"b": 5.0}, "at '/b': exclusiveMaximum: got 5, want < 5"},
		{map[string]any{"c": 0.0}, "at '/c': minimum: got 0, want >= 1"},
		{map[string]any{"d": 3.0}, "at '/d': maximum: got 3, want <= 2"},
	} {
		if err := s.Validate(obj(t, tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("Validate(%v) = %v, want %s", tc.in, err, tc.want)
		}
	}
}

func TestValidateNilIsEmptyObject(t *testing.T) {
	if err := mustCompile(t, `{"type": "object"}`).Validate(nil); err != nil {
		t.Fatalf("nil against an object schema: %v", err)
	}
	err := mustCompile(t, `{"required": ["a"]}`).Validate(nil)
	if err == nil || !strings.Contains(err.Error(), "missing property 'a'") {
		t.Fatalf("nil against a required field: %v", err)
	}
}

func TestValidateBoundsProblems(t *testing.T) {
	s := mustCompile(t, `{"properties": {"l": {"items": {"type": "string"}}}}`)
	items := make([]any, 100)
	for i := range items {
		items[i] = float64(i)
	}
	err := s.Validate(obj(t, map[string]any{"l": items}))
	var se *schema.Error
	if !errors.As(err, &se) || len(se.Problems) != schema.MaxProblems || se.More != 100-schema.MaxProblems {
		t.Fatalf("Validate: %v", err)
	}
	if !strings.HasSuffix(err.Error(), "; and 80 more") || !strings.HasPrefix(err.Error(), "at '/l/0': got number, want string; at '/l/1': ") {
		t.Fatalf("Error() = %q", err.Error())
	}
}

func TestCompileRefuses(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "s.json")
	if err := os.WriteFile(local, []byte(`{"type": "string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, raw, want string }{
		{"not JSON", `{"type": `, "is not a JSON object"},
		{"an array", `[1]`, "is not a JSON object"},
		{"a boolean schema", `true`, "is not a JSON object"},
		{"a bad type", `{"type": 3}`, "is not a valid JSON Schema: "},
		{"an unknown type", `{"type": "text"}`, "at '/type'"},
		{"a bad pattern", `{"pattern": "(("}`, "not valid regex"},
		{"a dangling ref", `{"$ref": "#/$defs/a"}`, `does not compile: json-pointer in "#/$defs/a" not found`},
		{"a file ref", `{"$ref": "file://` + filepath.ToSlash(local) + `"}`, "does not compile"},
		{"a relative file ref", `{"$ref": "s.json"}`, "does not compile"},
		{"a URL ref", `{"$ref": "https://example.com/s.json"}`, "does not compile"},
		{"too deep", strings.Repeat(`{"not": `, 40) + `{}` + strings.Repeat(`}`, 40), "nested deeper than 32 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schema.Compile([]byte(tt.raw))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Compile(%s) = %v, want an error containing %q", tt.raw, err, tt.want)
			}
		})
	}
}

func TestCompileMetaSchemaRef(t *testing.T) {
	s := mustCompile(t, `{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"$ref": "#/definitions/n"}}, "definitions": {"n": {"type": "number"}}}`)
	if err := s.Validate(obj(t, map[string]any{"a": "x"})); err == nil || err.Error() != "at '/a': got string, want number" {
		t.Fatalf("Validate: %v", err)
	}
	st, err := schema.Struct([]byte(answer))
	if err != nil || st.GetFields()["required"].GetListValue().GetValues()[0].GetStringValue() != "approved" {
		t.Fatalf("Struct: %v, %v", st, err)
	}
}
