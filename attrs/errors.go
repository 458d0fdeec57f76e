package attrs

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error this package returns for input that
// breaks its rules: a schema, an attribute value, a query (*SyntaxError,
// *TypeError, *AttributeError). The API answers InvalidArgument for it;
// retrying does not help. Decode's errors do not wrap it: stored bytes
// that do not decode are damage, not a caller's mistake.
var ErrInvalid = errors.New("invalid search attributes")

// SyntaxError is a query that does not parse. Pos is the 1-based byte
// offset of the offending token in the query (its column, for a query of
// one line of ASCII); the end of the query is len(query)+1.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("position %d: %s", e.Pos, e.Msg) }

// Unwrap makes a SyntaxError an ErrInvalid.
func (e *SyntaxError) Unwrap() error { return ErrInvalid }

// TypeError is a query that parses but does not fit a schema (Query.Check):
// an unknown attribute, an operator its type does not have, a value of the
// wrong type. Pos is the 1-based byte offset of the offending term, as in
// SyntaxError.
type TypeError struct {
	Pos int
	Msg string
}

func (e *TypeError) Error() string { return fmt.Sprintf("position %d: %s", e.Pos, e.Msg) }

// Unwrap makes a TypeError an ErrInvalid.
func (e *TypeError) Unwrap() error { return ErrInvalid }

// AttributeError is a declaration or a value of one attribute that breaks
// the rules: a bad name, an unknown type, an undeclared attribute, a value
// of the wrong type or too large. (Errors about a whole schema or set,
// such as too many attributes, are not about one: they wrap ErrInvalid
// without a type of their own.)
type AttributeError struct {
	Name string
	Msg  string
}

func (e *AttributeError) Error() string { return fmt.Sprintf("attribute %q: %s", e.Name, e.Msg) }

// Unwrap makes an AttributeError an ErrInvalid.
func (e *AttributeError) Unwrap() error { return ErrInvalid }
