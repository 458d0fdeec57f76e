package attrs

import (
	"fmt"
	"maps"
	"slices"
)

// Schema is the search attributes a workflow declares: name → Type. A
// query on the workflow's handlers may name them (and the built-in
// fields), and a handler's Set holds values of them only.
//
// Names match [a-z][a-z0-9_]{0,63} and are neither a word of the query
// language (and, or, not, in, contains, exists, order, by, asc, desc,
// true, false, null, is, like, between), nor a built-in field (workflow,
// status, created_at, updated_at) or a handler field kept for one (id,
// handler_id, version, workflow_version, completed_at, idle_since,
// residency, owner, parent, schedule_id, deadline, error, result), nor do
// they start with "wfd_". A schema has at most MaxAttributes names.
type Schema map[string]Type

// ParseSchema reads declarations (name → type name, as Type.String writes
// it: "string", "keyword_list", "int", "double", "bool", "time") and
// validates the schema (see Validate).
func ParseSchema(decl map[string]string) (Schema, error) {
	s := make(Schema, len(decl))
	for _, name := range slices.Sorted(maps.Keys(decl)) {
		t, msg := parseType(decl[name])
		if msg != "" {
			return nil, &AttributeError{Name: name, Msg: msg}
		}
		s[name] = t
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Validate reports whether s follows the rules (see Schema). The error
// wraps ErrInvalid; it is an *AttributeError about the first bad
// attribute in sorted order, if one is.
func (s Schema) Validate() error {
	if len(s) > MaxAttributes {
		return fmt.Errorf("%w: a workflow declares at most %d search attributes, not %d", ErrInvalid, MaxAttributes, len(s))
	}
	for _, name := range slices.Sorted(maps.Keys(s)) {
		if msg := checkName(name); msg != "" {
			return &AttributeError{Name: name, Msg: msg}
		}
		if !s[name].Valid() {
			return &AttributeError{Name: name, Msg: fmt.Sprintf("unknown type %v", s[name])}
		}
	}
	return nil
}

// Declarations returns s as ParseSchema reads it: name → type name.
func (s Schema) Declarations() map[string]string {
	decl := make(map[string]string, len(s))
	for name, t := range s {
		decl[name] = t.String()
	}
	return decl
}

// CheckSet reports whether set fits s: every attribute declared, and of
// its declared type within the limits or null (which deletes it, in an
// update: see Merge). It is for values built in Go (a step's typed
// update); Convert checks what the API receives. The error is an
// *AttributeError about the first bad attribute in sorted order.
func (s Schema) CheckSet(set Set) error {
	for _, name := range slices.Sorted(maps.Keys(set)) {
		v := set[name]
		t, ok := s[name]
		switch {
		case !ok:
			return &AttributeError{Name: name, Msg: "not declared by the workflow"}
		case v.IsNull():
			continue
		case v.Type() != t:
			return &AttributeError{Name: name, Msg: fmt.Sprintf("want %v, got %v %v", t, v.Type(), v)}
		}
		if msg := v.check(); msg != "" {
			return &AttributeError{Name: name, Msg: msg}
		}
	}
	return nil
}
