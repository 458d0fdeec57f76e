// Package schema compiles the JSON Schemas wfd checks payloads against (a
// workflow's input, the data of its outside event types, a human task's
// answer) and validates payloads with them. It is the one place that uses
// the JSON Schema library, so that the engine and the server compile with
// the same settings and word failures the same way.
//
// Schemas are self-contained: a "$ref" may point inside the schema or at
// the standard meta-schemas, never at a file or a URL (nothing is loaded:
// a schema that comes over the API must not read the server's files).
// Draft 2020-12 applies unless the schema's "$schema" names another;
// "format" is an annotation, not checked, as that draft says.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wfd-dev/wfd/internal/payload"
)

// MaxProblems bounds the failures an Error lists: a list of 10,000 bad
// items must not make a 10,000-line error.
const MaxProblems = 20

// Schema is a compiled JSON Schema. It is safe for concurrent use.
type Schema struct {
	s *jsonschema.Schema
}

// url names every schema inside its own compiler; it appears nowhere. It
// is hierarchical (a urn is not), so that a relative "$ref" resolves under
// it to a URL nothing loads, and fails to compile.
const url = "wfd://schema/root.json"

// Compile compiles a JSON Schema given as JSON. The schema must be a JSON
// object that a google.protobuf.Struct can carry within the default
// payload limits (the API returns it as one). The error says what is
// wrong, without naming the schema: the caller does.
func Compile(raw []byte) (*Schema, error) {
	if err := checkObject(raw); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	// No loader: a $ref to a file or URL fails to compile (the
	// meta-schemas are built into the library and still resolve).
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	switch {
	case err == nil:
		return &Schema{s: s}, nil
	case errors.As(err, &sve) && errors.As(sve.Err, &ve):
		// The meta-schema is an allOf of its vocabularies: that it failed
		// says nothing.
		return nil, fmt.Errorf("is not a valid JSON Schema: %w", describe(ve, true))
	}
	// The url is this package's, unknown to the reader: "#/a", not "urn:...#/a".
	return nil, fmt.Errorf("does not compile: %s", strings.ReplaceAll(flatten(err.Error()), url, ""))
}

// checkObject refuses a schema the API could not return as a Struct: not
// an object, or one that breaks the payload rules (too deep, too large).
func checkObject(raw []byte) error {
	var st structpb.Struct
	if err := protojson.Unmarshal(raw, &st); err != nil {
		if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return errors.New("is not a JSON object")
		}
		return fmt.Errorf("is not a JSON object: %w", err)
	}
	if err := payload.Check(payload.Limits{}, "schema", &st); err != nil {
		return err
	}
	return nil
}

// Struct returns a schema's JSON as the Struct the API carries; raw must
// be a schema Compile accepted.
func Struct(raw []byte) (*structpb.Struct, error) {
	var st structpb.Struct
	if err := protojson.Unmarshal(raw, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Error is a payload's failure to match a schema: one problem per failing
// value, in a stable order, as "at '/approved': got string, want boolean"
// (the location is a JSON pointer into the payload; empty, it is the
// payload itself).
type Error struct {
	Problems []string
	// More counts the problems past MaxProblems that Problems leaves out.
	More int
}

func (e *Error) Error() string {
	s := strings.Join(e.Problems, "; ")
	if e.More > 0 {
		s += fmt.Sprintf("; and %d more", e.More)
	}
	return s
}

// Validate checks a payload (nil is the empty object) and returns nil or
// an *Error.
func (s *Schema) Validate(v *structpb.Struct) error {
	err := s.s.Validate(v.AsMap())
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		// A reference cycle the payload ran into, say.
		return &Error{Problems: []string{strings.ReplaceAll(err.Error(), url, "")}}
	}
	return describe(ve, false)
}

// describe lists a validation's failures in an Error, without the allOf
// failures if skipAllOf.
func describe(ve *jsonschema.ValidationError, skipAllOf bool) *Error {
	var all []string
	problems(ve, skipAllOf, &all)
	if len(all) == 0 { // cannot happen: the root always has a cause
		all = []string{"does not match"}
	}
	e := &Error{Problems: all}
	if len(all) > MaxProblems {
		e.Problems, e.More = all[:MaxProblems], len(all)-MaxProblems
	}
	return e
}

// problems lists e's failures depth first, each "at '<pointer>': what".
// The library finds them in map order: siblings are sorted here, so that
// the same payload always gets the same message. A failure that only
// wraps another (a $ref with one cause) is left out, as the library's own
// text leaves it out; so are the root's "validation failed with <url>"
// and a value's "validation failed" over its several failures.
func problems(e *jsonschema.ValidationError, skipAllOf bool, out *[]string) {
	_, isRef := e.ErrorKind.(*kind.Reference)
	_, isRoot := e.ErrorKind.(*kind.Schema)
	_, isAllOf := e.ErrorKind.(*kind.AllOf)
	_, isGroup := e.ErrorKind.(*kind.Group) // "validation failed": its causes say how
	if !isRoot && !isGroup && !(isRef && len(e.Causes) == 1) && !(skipAllOf && isAllOf) {
		// The library words one failure, without its causes, as
		// "at '<pointer>': what"; its printer is not exported.
		one := &jsonschema.ValidationError{SchemaURL: e.SchemaURL, InstanceLocation: e.InstanceLocation, ErrorKind: e.ErrorKind}
		text := one.Error()
		if what, ok := plain(e.ErrorKind); ok {
			text = "at " + pointer(e.InstanceLocation) + ": " + what
		}
		*out = append(*out, text)
	}
	causes := slices.Clone(e.Causes)
	slices.SortStableFunc(causes, func(a, b *jsonschema.ValidationError) int {
		if c := slices.Compare(a.InstanceLocation, b.InstanceLocation); c != 0 {
			return c
		}
		return strings.Compare(kindText(a), kindText(b))
	})
	for _, c := range causes {
		problems(c, skipAllOf, out)
	}
}

func kindText(e *jsonschema.ValidationError) string {
	return (&jsonschema.ValidationError{SchemaURL: e.SchemaURL, ErrorKind: e.ErrorKind}).Error()
}

// flatten makes the library's multi-line text one line: "first; second".
func flatten(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(strings.TrimSpace(l), "- ")
	}
	return strings.Join(lines, "; ")
}

// plain words the failures that hold numbers as Go prints numbers, with
// the relation the bound asks for ("got 1e+09, want <= 1000", "got 0,
// want > 0"): the library's printer writes them for an English reader
// ("got 1×10⁰⁹, want 1,000"), which a program reading the message does
// not expect, and a bare "got 0, want 0" does not say what is wrong.
func plain(k jsonschema.ErrorKind) (string, bool) {
	rat := func(r *big.Rat) string {
		f, _ := r.Float64()
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	switch k := k.(type) {
	case *kind.Minimum:
		return fmt.Sprintf("minimum: got %s, want >= %s", rat(k.Got), rat(k.Want)), true
	case *kind.Maximum:
		return fmt.Sprintf("maximum: got %s, want <= %s", rat(k.Got), rat(k.Want)), true
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("exclusiveMinimum: got %s, want > %s", rat(k.Got), rat(k.Want)), true
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("exclusiveMaximum: got %s, want < %s", rat(k.Got), rat(k.Want)), true
	case *kind.MultipleOf:
		return fmt.Sprintf("multipleOf: got %s, want a multiple of %s", rat(k.Got), rat(k.Want)), true
	case *kind.MinLength:
		return fmt.Sprintf("minLength: got %d, want >= %d", k.Got, k.Want), true
	case *kind.MaxLength:
		return fmt.Sprintf("maxLength: got %d, want <= %d", k.Got, k.Want), true
	case *kind.MinItems:
		return fmt.Sprintf("minItems: got %d, want >= %d", k.Got, k.Want), true
	case *kind.MaxItems:
		return fmt.Sprintf("maxItems: got %d, want <= %d", k.Got, k.Want), true
	case *kind.MinProperties:
		return fmt.Sprintf("minProperties: got %d, want >= %d", k.Got, k.Want), true
	case *kind.MaxProperties:
		return fmt.Sprintf("maxProperties: got %d, want <= %d", k.Got, k.Want), true
	}
	return "", false
}

// pointer writes an instance location as the library does: a JSON pointer
// in single quotes.
func pointer(loc []string) string {
	var b strings.Builder
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(esc.Replace(tok))
	}
	q := strconv.Quote(b.String())
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, "'", `\'`) + "'"
}
