package attrs

import (
	"fmt"
	"strings"
)

// Type is the type of a search attribute. The zero Type is the type of the
// null Value; no schema declares it.
type Type int

// The attribute types. There is one string type, compared exactly (wfd has
// no full-text search, so Temporal's Text/Keyword split would name one
// behaviour twice); KeywordList holds several strings, and a query asks
// whether it contains one.
const (
	String      Type = iota + 1 // "string": UTF-8, at most MaxStringBytes, ordered by bytes
	KeywordList                 // "keyword_list": at most MaxListItems strings; contains, exists
	Int                         // "int": an integer within ±MaxInt
	Double                      // "double": a finite float64
	Bool                        // "bool"
	Time                        // "time": an instant, kept to the microsecond, in UTC
)

// Limits on schemas, values and queries. They keep a handler's metadata
// small, keep every value exact in JSON (no NaN or infinity, ints a
// float64 holds) and storable as it is in both stores (PostgreSQL's text
// has no NUL, its timestamps microseconds), and keep a hostile query from
// costing more than a small, bounded amount.
const (
	MaxAttributes  = 32        // attributes a workflow declares
	MaxNameBytes   = 64        // bytes of an attribute name
	MaxStringBytes = 256       // bytes of a string value, and of each keyword_list item
	MaxListItems   = 32        // items of a keyword_list value
	MaxInt         = 1<<53 - 1 // the largest int magnitude: exact as a JSON (float64) number
	MaxQueryBytes  = 2048      // bytes of a query
	MaxDepth       = 32        // nesting of parentheses and not in a query
	MaxTerms       = 64        // conditions in a query, and values in one in list
)

// The built-in fields a query can name besides the declared attributes.
// status is compared with =, != and in against running, completed, failed
// and cancelled; the others have the type Builtins gives them.
const (
	FieldWorkflow  = "workflow"   // string: the workflow's name
	FieldStatus    = "status"     // a status: running, completed, failed, cancelled
	FieldCreatedAt = "created_at" // time
	FieldUpdatedAt = "updated_at" // time
)

func (t Type) String() string {
	switch t {
	case 0:
		return "null"
	case String:
		return "string"
	case KeywordList:
		return "keyword_list"
	case Int:
		return "int"
	case Double:
		return "double"
	case Bool:
		return "bool"
	case Time:
		return "time"
	default:
		return fmt.Sprintf("Type(%d)", int(t))
	}
}

// Valid reports whether t is one of the attribute types.
func (t Type) Valid() bool { return t >= String && t <= Time }

// ParseType reads a type's name, as Type.String writes it. The error
// wraps ErrInvalid.
func ParseType(s string) (Type, error) {
	t, msg := parseType(s)
	if msg != "" {
		return 0, fmt.Errorf("%w: %s", ErrInvalid, msg)
	}
	return t, nil
}

// parseType reads a type's name, or says why it cannot.
func parseType(s string) (Type, string) {
	for t := String; t <= Time; t++ {
		if s == t.String() {
			return t, ""
		}
	}
	return 0, fmt.Sprintf("unknown type %q (want string, keyword_list, int, double, bool or time)", s)
}

// checkName reports why name cannot be an attribute's name, or "".
func checkName(name string) string {
	if name == "" || len(name) > MaxNameBytes {
		return fmt.Sprintf("a name is 1 to %d bytes", MaxNameBytes)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return "a name is a lowercase letter, then lowercase letters, digits and underscores"
		}
	}
	switch {
	case keyword(name):
		return "a word of the query language cannot be a name"
	case reservedField(name):
		return "a built-in field's name (or one kept for built-in fields) cannot be a name"
	case strings.HasPrefix(name, "wfd_"):
		return `names starting with "wfd_" are kept for built-in fields`
	}
	return ""
}

// keyword reports whether the lowercase word w is a word of the query
// language. Some are not used yet (null, is, like, between): keeping them
// out of attribute names now lets the language grow without breaking a
// schema.
func keyword(w string) bool {
	switch w {
	case "and", "or", "not", "in", "contains", "exists", "order", "by", "asc", "desc",
		"true", "false", "null", "is", "like", "between":
		return true
	}
	return false
}

// reservedField reports whether name is a built-in field, or a field of a
// handler that may become one: attributes must not shadow them.
func reservedField(name string) bool {
	switch name {
	case FieldWorkflow, FieldStatus, FieldCreatedAt, FieldUpdatedAt,
		"id", "handler_id", "version", "workflow_version", "completed_at", "idle_since",
		"residency", "owner", "parent", "schedule_id", "deadline", "error", "result":
		return true
	}
	return false
}
