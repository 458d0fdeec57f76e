package attrs

import (
	"fmt"
	"strings"
)

// Query is a parsed query: a condition and an order, both optional. Parse
// builds it; Check fits it to a schema and fixes the types of the fields
// it names; then Match evaluates it, Order sorts by it, and Plan says
// which index could answer it. Its parts are exported for the stores that
// translate a query (to SQL, say); they must not change them. Once Check
// has returned, a Query is safe to share between goroutines.
type Query struct {
	Where Expr   // nil: every handler matches
	Order *Order // nil: the store's order (newest first)

	// types are the types of the fields the query names, fixed by a
	// successful Check; nil before.
	types map[string]Type
}

// Order sorts the matching handlers by one field. Handlers without the
// field come last in either direction. Ties (and handlers that all lack
// it) keep the store's order.
type Order struct {
	Field Field
	Desc  bool

	typ Type // the field's type, fixed by Check; 0 before
}

// Field is a name in a query: a declared attribute or a built-in field.
type Field struct {
	Name string
	At   int // 1-based byte offset in the query
}

// Expr is a condition: *And, *Or, *Not, *Compare, *In, *Contains or
// *Exists.
type Expr interface {
	// Pos is the 1-based byte offset where the condition starts.
	Pos() int
	// String writes the condition in canonical form (see Query.String).
	String() string
	expr()
}

// And holds when every term holds. Parse gives it two or more terms, none
// of them an *And.
type And struct{ Terms []Expr }

// Or holds when some term holds. Parse gives it two or more terms, none of
// them an *Or.
type Or struct{ Terms []Expr }

// Not holds when X does not.
type Not struct {
	At int
	X  Expr
}

// Compare holds when the field has a value and the value compares with
// Value as Op says.
type Compare struct {
	Field Field
	Op    Op
	OpAt  int
	Value Literal
}

// In holds when the field has a value equal to one of Values.
type In struct {
	Field  Field
	Values []Literal
}

// Contains holds when the field is a keyword_list with Value among its
// items.
type Contains struct {
	Field Field
	Value Literal
}

// Exists holds when the field has a value.
type Exists struct{ Field Field }

// Op is a comparison operator.
type Op int

// The comparison operators.
const (
	Eq Op = iota + 1 // =
	Ne               // !=
	Lt               // <
	Le               // <=
	Gt               // >
	Ge               // >=
)

func (o Op) String() string {
	switch o {
	case Eq:
		return "="
	case Ne:
		return "!="
	case Lt:
		return "<"
	case Le:
		return "<="
	case Gt:
		return ">"
	case Ge:
		return ">="
	default:
		return fmt.Sprintf("Op(%d)", int(o))
	}
}

// opOf returns the operator Op.String writes as s, or 0.
func opOf(s string) Op {
	for o := Eq; o <= Ge; o++ {
		if s == o.String() {
			return o
		}
	}
	return 0
}

// holds reports whether a comparison result c (as from Value.Compare)
// satisfies o.
func (o Op) holds(c int) bool {
	switch o {
	case Eq:
		return c == 0
	case Ne:
		return c != 0
	case Lt:
		return c < 0
	case Le:
		return c <= 0
	case Gt:
		return c > 0
	case Ge:
		return c >= 0
	default:
		return false
	}
}

func (*And) expr()      {}
func (*Or) expr()       {}
func (*Not) expr()      {}
func (*Compare) expr()  {}
func (*In) expr()       {}
func (*Contains) expr() {}
func (*Exists) expr()   {}

// Pos returns the position of the first term.
func (e *And) Pos() int { return e.Terms[0].Pos() }

// Pos returns the position of the first term.
func (e *Or) Pos() int { return e.Terms[0].Pos() }

// Pos returns the position of "not".
func (e *Not) Pos() int { return e.At }

// Pos returns the position of the field.
func (e *Compare) Pos() int { return e.Field.At }

// Pos returns the position of the field.
func (e *In) Pos() int { return e.Field.At }

// Pos returns the position of the field.
func (e *Contains) Pos() int { return e.Field.At }

// Pos returns the position of the field.
func (e *Exists) Pos() int { return e.Field.At }

// String writes q in canonical form: keywords in lowercase, one space
// between tokens, parentheses only where precedence needs them (an or
// inside an and, an and or or after not), literals as Literal.String
// writes them, "order by name" with desc but not asc. Parse reads it back
// to an equal Query, whose String is the same (if it fits in
// MaxQueryBytes: spaces and escapes can make it longer than the query
// Parse read).
func (q *Query) String() string {
	var parts []string
	if q.Where != nil {
		parts = append(parts, q.Where.String())
	}
	if q.Order != nil {
		o := "order by " + q.Order.Field.Name
		if q.Order.Desc {
			o += " desc"
		}
		parts = append(parts, o)
	}
	return strings.Join(parts, " ")
}

func (e *And) String() string {
	terms := make([]string, len(e.Terms))
	for i, t := range e.Terms {
		terms[i] = t.String()
		if _, or := t.(*Or); or {
			terms[i] = "(" + terms[i] + ")"
		}
	}
	return strings.Join(terms, " and ")
}

func (e *Or) String() string {
	terms := make([]string, len(e.Terms))
	for i, t := range e.Terms {
		terms[i] = t.String()
	}
	return strings.Join(terms, " or ")
}

func (e *Not) String() string {
	switch e.X.(type) {
	case *And, *Or:
		return "not (" + e.X.String() + ")"
	default:
		return "not " + e.X.String()
	}
}

func (e *Compare) String() string {
	return e.Field.Name + " " + e.Op.String() + " " + e.Value.String()
}

func (e *In) String() string {
	values := make([]string, len(e.Values))
	for i, v := range e.Values {
		values[i] = v.String()
	}
	return e.Field.Name + " in (" + strings.Join(values, ", ") + ")"
}

func (e *Contains) String() string { return e.Field.Name + " contains " + e.Value.String() }

func (e *Exists) String() string { return e.Field.Name + " exists" }
