package attrs

import (
	"fmt"
	"strings"
)

// Parse reads a query (see the package documentation for the language).
// An empty query (or only spaces) has neither condition nor order: it
// matches every handler. A query that does not parse is a *SyntaxError
// naming the position of the offending token, such as
//
//	position 17: expected a value after ">"
//
// Parse knows nothing of the workflow's attributes: Check fits the query
// to them.
func Parse(src string) (*Query, error) {
	if len(src) > MaxQueryBytes {
		return nil, &SyntaxError{Pos: MaxQueryBytes + 1, Msg: fmt.Sprintf("a query is at most %d bytes, not %d", MaxQueryBytes, len(src))}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	q := &Query{}
	if t := p.peek(); t.kind != tokEOF && p.keyword(t) != "order" {
		if q.Where, err = p.or(1); err != nil {
			return nil, err
		}
	}
	if p.keyword(p.peek()) == "order" {
		if q.Order, err = p.order(); err != nil {
			return nil, err
		}
	}
	if p.peek().kind != tokEOF {
		if q.Order != nil {
			return nil, p.expected("the end of the query")
		}
		return nil, p.expected(`"and", "or", "order by" or the end of the query`)
	}
	return q, nil
}

// parser is a recursive-descent parser over the tokens of one query. Its
// recursion is bounded by MaxDepth: and and or chains are read in loops,
// and only parentheses and not nest.
type parser struct {
	toks  []token
	i     int
	terms int // conditions read so far
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// keyword returns t's word in lowercase if t is a word of the language
// (keywords are case-insensitive), else "".
func (p *parser) keyword(t token) string {
	if t.kind != tokIdent {
		return ""
	}
	if w := strings.ToLower(t.text); keyword(w) {
		return w
	}
	return ""
}

// expected is the error for a missing what at the current token.
func (p *parser) expected(what string) error {
	t := p.peek()
	msg := "expected " + what
	if p.i > 0 {
		msg += " after " + p.describe(p.toks[p.i-1])
	}
	if t.kind != tokEOF {
		msg += ", got " + p.describe(t)
	}
	return &SyntaxError{Pos: t.pos, Msg: msg}
}

// unclosed is the error for a missing what (and ")") at the current token,
// inside the parenthesis opened at open.
func (p *parser) unclosed(what string, open int) error {
	t := p.peek()
	msg := fmt.Sprintf(`expected %s after %s (to close the "(" at position %d)`, what, p.describe(p.toks[p.i-1]), open)
	if t.kind != tokEOF {
		msg += ", got " + p.describe(t)
	}
	return &SyntaxError{Pos: t.pos, Msg: msg}
}

// describe writes t for a message: a keyword, operator or punctuation in
// quotes, a name or number bare, a string as its literal.
func (p *parser) describe(t token) string {
	switch {
	case t.kind == tokEOF:
		return "the end of the query"
	case t.kind == tokString:
		return quote(t.text)
	case t.kind == tokNumber || t.kind == tokIdent && p.keyword(t) == "":
		return t.text
	default:
		return `"` + t.text + `"`
	}
}

// or reads and { "or" and }.
func (p *parser) or(depth int) (Expr, error) {
	var terms []Expr
	for {
		e, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		if or, ok := e.(*Or); ok { // (a or b) or c is a or b or c
			terms = append(terms, or.Terms...)
		} else {
			terms = append(terms, e)
		}
		if p.keyword(p.peek()) != "or" {
			break
		}
		p.next()
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return &Or{Terms: terms}, nil
}

// and reads unary { "and" unary }.
func (p *parser) and(depth int) (Expr, error) {
	var terms []Expr
	for {
		e, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		if and, ok := e.(*And); ok { // (a and b) and c is a and b and c
			terms = append(terms, and.Terms...)
		} else {
			terms = append(terms, e)
		}
		if p.keyword(p.peek()) != "and" {
			break
		}
		p.next()
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return &And{Terms: terms}, nil
}

// unary reads "not" unary | "(" or ")" | predicate.
func (p *parser) unary(depth int) (Expr, error) {
	t := p.peek()
	if depth > MaxDepth && (t.kind == tokLParen || p.keyword(t) == "not") {
		return nil, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("nested more than %d deep (parentheses and not)", MaxDepth)}
	}
	switch {
	case p.keyword(t) == "not":
		p.next()
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &Not{At: t.pos, X: x}, nil
	case t.kind == tokLParen:
		p.next()
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.peek().kind != tokRParen {
			return nil, p.unclosed(`"and", "or" or ")"`, t.pos)
		}
		p.next()
		return e, nil
	}
	return p.predicate()
}

// predicate reads name ( op value | ["not"] "in" list | ["not"] "contains"
// value | ["not"] "exists" ).
func (p *parser) predicate() (Expr, error) {
	t := p.peek()
	if t.kind != tokIdent || p.keyword(t) != "" {
		return nil, p.expected("a condition (an attribute's name, \"not\" or \"(\")")
	}
	if p.terms++; p.terms > MaxTerms {
		return nil, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("more than %d conditions", MaxTerms)}
	}
	p.next()
	f := Field{Name: t.text, At: t.pos}
	op := p.peek()
	if op.kind == tokOp {
		p.next()
		v, err := p.value(f)
		if err != nil {
			return nil, err
		}
		return &Compare{Field: f, Op: op.op, OpAt: op.pos, Value: v}, nil
	}
	not := p.keyword(op) == "not"
	if not {
		p.next()
	}
	var e Expr
	var err error
	switch p.keyword(p.peek()) {
	case "in":
		p.next()
		e, err = p.list(f)
	case "contains":
		p.next()
		var v Literal
		v, err = p.value(f)
		e = &Contains{Field: f, Value: v}
	case "exists":
		p.next()
		e = &Exists{Field: f}
	default:
		if not {
			return nil, p.expected(`"in", "contains" or "exists"`)
		}
		return nil, p.expected(`an operator (=, !=, <, <=, >, >=, in, contains, exists)`)
	}
	if err != nil {
		return nil, err
	}
	if not {
		return &Not{At: op.pos, X: e}, nil
	}
	return e, nil
}

// list reads "(" value { "," value } ")".
func (p *parser) list(f Field) (Expr, error) {
	if p.peek().kind != tokLParen {
		return nil, p.expected(`"(" and a list of values`)
	}
	open := p.next()
	in := &In{Field: f}
	for {
		if len(in.Values) == MaxTerms {
			return nil, &SyntaxError{Pos: p.peek().pos, Msg: fmt.Sprintf("more than %d values in a list", MaxTerms)}
		}
		v, err := p.value(f)
		if err != nil {
			return nil, err
		}
		in.Values = append(in.Values, v)
		if p.peek().kind != tokComma {
			break
		}
		p.next()
	}
	if p.peek().kind != tokRParen {
		return nil, p.unclosed(`"," or ")"`, open.pos)
	}
	p.next()
	return in, nil
}

// value reads a literal for field f. A bare word is a value only for
// status (status = running); elsewhere it is most likely a string whose
// quotes were forgotten.
func (p *parser) value(f Field) (Literal, error) {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.next()
		return Literal{At: t.pos, Kind: LitString, Str: t.text}, nil
	case t.kind == tokNumber:
		p.next()
		return t.lit, nil
	case p.keyword(t) == "true" || p.keyword(t) == "false":
		p.next()
		return Literal{At: t.pos, Kind: LitBool, Bool: p.keyword(t) == "true"}, nil
	case t.kind == tokIdent && p.keyword(t) == "" && strings.EqualFold(f.Name, FieldStatus):
		p.next()
		return Literal{At: t.pos, Kind: LitWord, Str: strings.ToLower(t.text)}, nil
	case t.kind == tokIdent && p.keyword(t) == "":
		err := p.expected("a value").(*SyntaxError)
		err.Msg += fmt.Sprintf(" (strings are in double quotes: %s)", quote(t.text))
		return Literal{}, err
	}
	return Literal{}, p.expected("a value")
}

// order reads "order" "by" name [ "asc" | "desc" ].
func (p *parser) order() (*Order, error) {
	p.next()
	if p.keyword(p.peek()) != "by" {
		return nil, p.expected(`"by"`)
	}
	p.next()
	t := p.peek()
	if t.kind != tokIdent || p.keyword(t) != "" {
		return nil, p.expected("a field to order by")
	}
	p.next()
	o := &Order{Field: Field{Name: t.text, At: t.pos}}
	switch p.keyword(p.peek()) {
	case "asc":
		p.next()
	case "desc":
		p.next()
		o.Desc = true
	}
	return o, nil
}
