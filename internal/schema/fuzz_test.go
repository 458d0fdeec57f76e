package schema_test

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/schema"
)

// FuzzSchema compiles any bytes as a schema (a worker sends its
// definitions' schemas over the API) and validates any JSON object with
// what compiles: neither may panic or hang, a compiled schema must convert
// to the Struct the API returns, and a refusal must be an *Error with at
// least one problem and at most MaxProblems.
func FuzzSchema(f *testing.F) {
	f.Add([]byte(answer), []byte(`{"approved": "yes", "n": 3.5, "extra": 1, "items": [{"x": "a"}]}`))
	f.Add([]byte(`{"$ref": "#"}`), []byte(`{}`))
	f.Add([]byte(`{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`), []byte(`{"a": 1}`))
	f.Add([]byte(`{"patternProperties": {"^a+$": {"type": "string"}}, "uniqueItems": true}`), []byte(`{"aaa": 1}`))
	f.Add([]byte(`{"$ref": "other.json"}`), []byte(`{}`))
	f.Add([]byte(`{"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"n": {"maximum": 3, "exclusiveMaximum": true}}}`), []byte(`{"n": 3}`))
	f.Fuzz(func(t *testing.T, raw, data []byte) {
		s, err := schema.Compile(raw)
		if err != nil {
			return
		}
		st, err := schema.Struct(raw)
		if err != nil {
			t.Fatalf("compiled %q, but Struct: %v", raw, err)
		}
		if _, err := protojson.Marshal(st); err != nil {
			t.Fatalf("compiled %q, but its Struct does not marshal: %v", raw, err)
		}
		var v structpb.Struct
		if protojson.Unmarshal(data, &v) != nil {
			return
		}
		err = s.Validate(&v)
		var se *schema.Error
		if err != nil && (!errors.As(err, &se) || len(se.Problems) == 0 || len(se.Problems) > schema.MaxProblems) {
			t.Fatalf("Validate(%s) with %s: %v", data, raw, err)
		}
	})
}
