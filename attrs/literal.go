package attrs

import (
	"fmt"
	"strconv"
	"time"
)

// LitKind is the kind of a literal as written in a query.
type LitKind int

// The kinds of literals.
const (
	LitString LitKind = iota + 1 // "text": a string, or a time for a time field
	LitWord                      // running: a bare word, a status (only after status)
	LitInt                       // 42, -7
	LitDouble                    // 1.5, 2e3
	LitBool                      // true, false
)

// Literal is a value written in a query, before it meets a type: "2025-01-31T00:00:00Z"
// is a string for a string attribute and a time for a time attribute, 100
// an int or a double. As converts it.
type Literal struct {
	At     int // 1-based byte offset in the query
	Kind   LitKind
	Str    string  // LitString (escapes resolved), LitWord (lowercase)
	Int    int64   // LitInt
	Double float64 // LitDouble
	Bool   bool    // LitBool
}

// String writes l as the query language does; it parses back to l.
func (l Literal) String() string {
	switch l.Kind {
	case LitString:
		return quote(l.Str)
	case LitWord:
		return l.Str
	case LitInt:
		return strconv.FormatInt(l.Int, 10)
	case LitDouble:
		return formatDouble(l.Double)
	case LitBool:
		return strconv.FormatBool(l.Bool)
	default:
		return fmt.Sprintf("Literal(%d)", int(l.Kind))
	}
}

// As returns l as a value of type t, for comparing with a field of that
// type: a string (or a bare word) for a string; an int for an int; an int
// or a double for a double; true or false for a bool; an RFC 3339 string
// of at most microsecond precision for a time. For a keyword_list, as
// contains compares it, l must be a string. The error is a *TypeError at
// l's position.
func (l Literal) As(t Type) (Value, error) {
	ok := false
	var v Value
	switch t {
	case String, KeywordList:
		v, ok = StringValue(l.Str), l.Kind == LitString || l.Kind == LitWord
	case Int:
		v, ok = IntValue(l.Int), l.Kind == LitInt
	case Double:
		v, ok = DoubleValue(l.Double), l.Kind == LitDouble
		if l.Kind == LitInt {
			v, ok = DoubleValue(float64(l.Int)), true // exact: |Int| <= MaxInt
		}
	case Bool:
		v, ok = BoolValue(l.Bool), l.Kind == LitBool
	case Time:
		return l.asTime()
	}
	if !ok {
		return Value{}, &TypeError{Pos: l.At, Msg: fmt.Sprintf("want %s, got %v", want(t), l)}
	}
	return v, nil
}

func (l Literal) asTime() (Value, error) {
	if l.Kind != LitString {
		return Value{}, &TypeError{Pos: l.At, Msg: fmt.Sprintf("want %s, got %v", want(Time), l)}
	}
	tm, err := time.Parse(time.RFC3339Nano, l.Str)
	if err != nil {
		return Value{}, &TypeError{Pos: l.At, Msg: fmt.Sprintf("want %s, got %v", want(Time), l)}
	}
	if tm.Nanosecond()%1000 != 0 {
		// Values are kept to the microsecond; a finer bound would compare
		// differently in the stores (PostgreSQL rounds it).
		return Value{}, &TypeError{Pos: l.At, Msg: fmt.Sprintf("time %v is finer than a microsecond", l)}
	}
	return TimeValue(tm), nil
}

// want names what a literal for a field of type t looks like.
func want(t Type) string {
	switch t {
	case String, KeywordList:
		return `a string in double quotes`
	case Int:
		return "an integer"
	case Double:
		return "a number"
	case Bool:
		return "true or false"
	case Time:
		return `an RFC 3339 time in double quotes, such as "2025-01-31T09:00:00Z"`
	default:
		return t.String()
	}
}
