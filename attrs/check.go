package attrs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wfd-dev/wfd/internal/status"
)

// Check reports whether q fits schema s: every field is a built-in field
// or an attribute s declares, every operator applies to its field's type,
// and every literal converts to that type (Literal.As). The error is a
// *TypeError naming the position of the first offending term, such as
//
//	position 10: "amount" is an int: want an integer, got "x"
//	position 8: "<" does not apply to "vip", a bool (use = or !=)
//
// What applies to what:
//
//	string, int, double, time       = != < <= > >= in exists
//	bool                            = != in exists
//	keyword_list                    contains exists
//	workflow (a string)             = != < <= > >= in
//	created_at, updated_at (times)  = != < <= > >= in
//	status                          = != in, with running, completed, failed, cancelled
//
// A built-in field always has a value, so exists on one is refused as a
// mistake. Order by takes a string, int, double or time field (not
// status).
//
// When it succeeds, Check fixes the type of each field the query names to
// the schema's: from then on, Match and Order treat a value of another
// type (stored before a later version of the workflow changed the
// attribute's type) as missing, as a store's typed index or column does,
// and Plan types its terms. Check a query before sharing it. On a query
// Check has not accepted, Match compares each literal with a value as the
// value's own type, Order orders values of different types by type, and
// Plan finds no term: it is for tests, not for stores.
func (q *Query) Check(s Schema) error {
	types := map[string]Type{}
	if q.Where != nil {
		if err := check(q.Where, s, types); err != nil {
			return err
		}
	}
	var orderType Type
	if q.Order != nil {
		f, err := checkField(q.Order.Field, s, nil)
		if err != nil {
			return err
		}
		if !f.typ.ordered() || f.status {
			return &TypeError{Pos: q.Order.Field.At, Msg: fmt.Sprintf("cannot order by %s (order by a string, int, double or time)", describeField(q.Order.Field.Name, f))}
		}
		orderType = f.typ
	}
	q.types = types
	if q.Order != nil {
		q.Order.typ = orderType
	}
	return nil
}

// check checks e against s and records the types of the fields it names
// in types.
func check(e Expr, s Schema, types map[string]Type) error {
	switch e := e.(type) {
	case *And:
		return checkAll(e.Terms, s, types)
	case *Or:
		return checkAll(e.Terms, s, types)
	case *Not:
		return check(e.X, s, types)
	case *Compare:
		return checkCompare(e, s, types)
	case *In:
		f, err := checkField(e.Field, s, types)
		if err != nil {
			return err
		}
		if f.typ == KeywordList {
			return &TypeError{Pos: e.Field.At, Msg: fmt.Sprintf("in does not apply to %s (use contains)", describeField(e.Field.Name, f))}
		}
		for _, v := range e.Values {
			if err := checkLiteral(e.Field.Name, f, v); err != nil {
				return err
			}
		}
	case *Contains:
		f, err := checkField(e.Field, s, types)
		if err != nil {
			return err
		}
		if f.typ != KeywordList {
			return &TypeError{Pos: e.Field.At, Msg: fmt.Sprintf("contains applies to a keyword_list, not to %s", describeField(e.Field.Name, f))}
		}
		return checkLiteral(e.Field.Name, f, e.Value)
	case *Exists:
		f, err := checkField(e.Field, s, types)
		if err != nil {
			return err
		}
		if f.builtin {
			return &TypeError{Pos: e.Field.At, Msg: fmt.Sprintf("%s always exists", e.Field.Name)}
		}
	}
	return nil
}

func checkAll(terms []Expr, s Schema, types map[string]Type) error {
	for _, t := range terms {
		if err := check(t, s, types); err != nil {
			return err
		}
	}
	return nil
}

func checkCompare(e *Compare, s Schema, types map[string]Type) error {
	f, err := checkField(e.Field, s, types)
	if err != nil {
		return err
	}
	bad := ""
	switch {
	case f.typ == KeywordList:
		bad = "use contains"
	case f.status && e.Op != Eq && e.Op != Ne:
		bad = "use =, != or in"
	case f.typ == Bool && e.Op != Eq && e.Op != Ne:
		bad = "use = or !="
	}
	if bad != "" {
		return &TypeError{Pos: e.OpAt, Msg: fmt.Sprintf("%q does not apply to %s (%s)", e.Op.String(), describeField(e.Field.Name, f), bad)}
	}
	return checkLiteral(e.Field.Name, f, e.Value)
}

// checkField finds the field a query names, and records its type in
// types (if not nil).
func checkField(fd Field, s Schema, types map[string]Type) (field, error) {
	f, ok := lookupField(s, fd.Name)
	if !ok {
		msg := fmt.Sprintf("unknown attribute %q", fd.Name)
		if lower := strings.ToLower(fd.Name); lower != fd.Name {
			if _, ok := lookupField(s, lower); ok {
				msg += fmt.Sprintf(" (names are lowercase: %s)", lower)
			}
		}
		return field{}, &TypeError{Pos: fd.At, Msg: msg}
	}
	if types != nil {
		types[fd.Name] = f.typ
	}
	return f, nil
}

// checkLiteral reports whether l converts to field f's type (and, for
// status, names a status).
func checkLiteral(name string, f field, l Literal) error {
	v, err := l.As(f.typ)
	if f.status && (err != nil || statusOf(v.AsString()) == 0) {
		return &TypeError{Pos: l.At, Msg: fmt.Sprintf("%v is not a status (running, completed, failed or cancelled)", l)}
	}
	if err != nil {
		return &TypeError{Pos: l.At, Msg: fmt.Sprintf("%s is %s: %s", fieldName(name, f), article(f.typ), err.(*TypeError).Msg)}
	}
	return nil
}

// statusOf returns the status named name, or 0.
func statusOf(name string) status.Status {
	for _, s := range status.All() {
		if s.String() == name {
			return s
		}
	}
	return 0
}

// describeField names a field and its type for a message: "amount", an
// int; created_at, a time; status.
func describeField(name string, f field) string {
	if f.status {
		return "status"
	}
	return fmt.Sprintf("%s, %s", fieldName(name, f), article(f.typ))
}

// fieldName writes a field's name for a message: an attribute quoted, a
// built-in field bare.
func fieldName(name string, f field) string {
	if f.builtin {
		return name
	}
	return strconv.Quote(name)
}

// article writes a type with its indefinite article.
func article(t Type) string {
	if t == Int {
		return "an int"
	}
	return "a " + t.String()
}

// ordered reports whether values of type t have <, <=, >, >= and can
// sort a listing. A bool has two values and a keyword_list no natural
// order: ordering by either is almost certainly a mistake.
func (t Type) ordered() bool { return t == String || t == Int || t == Double || t == Time }

// field describes what a name in a query refers to.
type field struct {
	typ     Type
	builtin bool
	status  bool // the status field: a String restricted to the statuses, =, != and in
}

// lookupField finds name among the built-in fields, then in s.
func lookupField(s Schema, name string) (field, bool) {
	switch name {
	case FieldWorkflow:
		return field{typ: String, builtin: true}, true
	case FieldStatus:
		return field{typ: String, builtin: true, status: true}, true
	case FieldCreatedAt, FieldUpdatedAt:
		return field{typ: Time, builtin: true}, true
	}
	t, ok := s[name]
	return field{typ: t}, ok && t.Valid()
}

// Fields returns the names of the fields q's condition and order name,
// sorted, each once.
func (q *Query) Fields() []string {
	seen := map[string]bool{}
	var walk func(e Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *And:
			for _, t := range e.Terms {
				walk(t)
			}
		case *Or:
			for _, t := range e.Terms {
				walk(t)
			}
		case *Not:
			walk(e.X)
		case *Compare:
			seen[e.Field.Name] = true
		case *In:
			seen[e.Field.Name] = true
		case *Contains:
			seen[e.Field.Name] = true
		case *Exists:
			seen[e.Field.Name] = true
		}
	}
	if q.Where != nil {
		walk(q.Where)
	}
	if q.Order != nil {
		seen[q.Order.Field.Name] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Builtin reports whether name is a built-in field (workflow, status,
// created_at, updated_at) rather than an attribute.
func Builtin(name string) bool {
	switch name {
	case FieldWorkflow, FieldStatus, FieldCreatedAt, FieldUpdatedAt:
		return true
	}
	return false
}
