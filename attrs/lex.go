package attrs

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a token of the query language.
type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokString
	tokNumber
	tokOp
	tokLParen
	tokRParen
	tokComma
)

// token is one lexeme. pos is its 1-based byte offset.
type token struct {
	kind tokKind
	pos  int
	text string  // the source text; for a string, its value (escapes resolved)
	op   Op      // tokOp
	lit  Literal // tokNumber: the number
}

// lex splits src into tokens, ending with tokEOF at len(src)+1.
func lex(src string) ([]token, error) {
	if !utf8.ValidString(src) {
		return nil, &SyntaxError{Pos: invalidUTF8(src) + 1, Msg: "invalid UTF-8"}
	}
	var toks []token
	for i := 0; i < len(src); {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		}
		tok, next, err := lexToken(src, i)
		if err != nil {
			return nil, err
		}
		toks, i = append(toks, tok), next
	}
	return append(toks, token{kind: tokEOF, pos: len(src) + 1}), nil
}

// invalidUTF8 returns the offset of the first byte of src that is not
// valid UTF-8.
func invalidUTF8(src string) int {
	i := 0
	for i < len(src) {
		r, size := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return i
}

// lexToken reads the token at src[i], which is not a space, and returns
// it and the offset after it.
func lexToken(src string, i int) (token, int, error) {
	c, pos := src[i], i+1
	switch {
	case c == '(' || c == ')' || c == ',':
		return token{kind: punctKind(c), pos: pos, text: src[i : i+1]}, i + 1, nil
	case isIdentStart(c):
		j := i + 1
		for j < len(src) && isIdentChar(src[j]) {
			j++
		}
		return token{kind: tokIdent, pos: pos, text: src[i:j]}, j, nil
	case c == '"':
		return lexString(src, i)
	case isDigit(c) || c == '-' && i+1 < len(src) && isDigit(src[i+1]):
		return lexNumber(src, i)
	case c == '=' || c == '!' || c == '<' || c == '>':
		return lexOp(src, i)
	case c == '\'':
		return token{}, 0, &SyntaxError{Pos: pos, Msg: `strings are in double quotes: "text"`}
	default:
		r, _ := utf8.DecodeRuneInString(src[i:])
		return token{}, 0, &SyntaxError{Pos: pos, Msg: fmt.Sprintf("unexpected character %q", r)}
	}
}

func punctKind(c byte) tokKind {
	switch c {
	case '(':
		return tokLParen
	case ')':
		return tokRParen
	default:
		return tokComma
	}
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// lexOp reads a comparison operator at src[i], and names the operators of
// other languages that people type by habit.
func lexOp(src string, i int) (token, int, error) {
	two := ""
	if i+1 < len(src) {
		two = src[i : i+2]
	}
	pos := i + 1
	switch two {
	case "==":
		return token{}, 0, &SyntaxError{Pos: pos, Msg: `use = to compare (not ==)`}
	case "<>":
		return token{}, 0, &SyntaxError{Pos: pos, Msg: `use != (not <>)`}
	case "!=", "<=", ">=":
		return token{kind: tokOp, pos: pos, text: two, op: opOf(two)}, i + 2, nil
	}
	if src[i] == '!' {
		return token{}, 0, &SyntaxError{Pos: pos, Msg: `unexpected "!" (use != or not)`}
	}
	return token{kind: tokOp, pos: pos, text: src[i : i+1], op: opOf(src[i : i+1])}, i + 1, nil
}

// lexNumber reads -?digits(.digits)?([eE][+-]?digits)? at src[i]: an int
// without a point or exponent, a double with one.
func lexNumber(src string, i int) (token, int, error) {
	j, isDouble, err := scanNumber(src, i)
	if err != nil {
		return token{}, 0, err
	}
	text, pos := src[i:j], i+1
	tok := token{kind: tokNumber, pos: pos, text: text}
	if isDouble {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return token{}, 0, &SyntaxError{Pos: pos, Msg: fmt.Sprintf("number %s out of range", text)}
		}
		if f == 0 {
			f = 0 // -0 is 0
		}
		tok.lit = Literal{At: pos, Kind: LitDouble, Double: f}
	} else {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n < -MaxInt || n > MaxInt {
			return token{}, 0, &SyntaxError{Pos: pos, Msg: fmt.Sprintf("integer %s out of range ±%d", text, MaxInt)}
		}
		tok.lit = Literal{At: pos, Kind: LitInt, Int: n}
	}
	return tok, j, nil
}

// scanNumber finds the end of the number at src[i] and whether it is a
// double.
func scanNumber(src string, i int) (end int, isDouble bool, err error) {
	j := i
	if src[j] == '-' {
		j++
	}
	digits := func() bool {
		start := j
		for j < len(src) && isDigit(src[j]) {
			j++
		}
		return j > start
	}
	digits()
	if j < len(src) && src[j] == '.' {
		j++
		if !digits() {
			return 0, false, &SyntaxError{Pos: j + 1, Msg: `expected a digit after "."`}
		}
		isDouble = true
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		j++
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if !digits() {
			return 0, false, &SyntaxError{Pos: j + 1, Msg: "expected a digit in the exponent"}
		}
		isDouble = true
	}
	if j < len(src) && (isIdentChar(src[j]) || src[j] == '.') {
		return 0, false, &SyntaxError{Pos: j + 1, Msg: fmt.Sprintf("malformed number %q", src[i:j+1])}
	}
	return j, isDouble, nil
}

// lexString reads a double-quoted string at src[i]. Its escapes are
// JSON's: \" \\ \/ \b \f \n \r \t and \uXXXX (a surrogate pair for a
// character outside the Basic Multilingual Plane). Control characters
// must be escaped, and no string holds NUL (no stored string does).
func lexString(src string, i int) (token, int, error) {
	var b strings.Builder
	start := i
	for i++; i < len(src); {
		c := src[i]
		switch {
		case c == '"':
			return token{kind: tokString, pos: start + 1, text: b.String()}, i + 1, nil
		case c == '\\':
			n, err := lexEscape(&b, src, i)
			if err != nil {
				return token{}, 0, err
			}
			i += n
		case c < 0x20:
			return token{}, 0, &SyntaxError{Pos: i + 1, Msg: `control character in a string (write \n, \t or \u00XX)`}
		default:
			b.WriteByte(c)
			i++
		}
	}
	return token{}, 0, &SyntaxError{Pos: start + 1, Msg: "unterminated string"}
}

// lexEscape writes the escape at src[i] (a backslash) to b and returns its
// length.
func lexEscape(b *strings.Builder, src string, i int) (int, error) {
	if i+1 >= len(src) {
		return 0, &SyntaxError{Pos: i + 1, Msg: "unterminated string"}
	}
	if c, ok := simpleEscape(src[i+1]); ok {
		b.WriteByte(c)
		return 2, nil
	}
	if src[i+1] != 'u' {
		r, _ := utf8.DecodeRuneInString(src[i+1:])
		return 0, &SyntaxError{Pos: i + 1, Msg: fmt.Sprintf(`unknown escape "\%c"`, r)}
	}
	r, ok := hex4(src, i+2)
	n := 6
	if ok && r >= 0xd800 && r < 0xdc00 { // a high surrogate: its low one follows
		low, lowOK := rune(0), false
		if i+7 < len(src) && src[i+6] == '\\' && src[i+7] == 'u' {
			low, lowOK = hex4(src, i+8)
		}
		r, ok, n = 0x10000+(r-0xd800)<<10+(low-0xdc00), lowOK && low >= 0xdc00 && low < 0xe000, 12
	} else if r >= 0xdc00 && r < 0xe000 {
		ok = false
	}
	switch {
	case !ok:
		return 0, &SyntaxError{Pos: i + 1, Msg: `bad \u escape: want \uXXXX (four hex digits; a surrogate pair for U+10000 and above)`}
	case r == 0:
		return 0, &SyntaxError{Pos: i + 1, Msg: `a string cannot contain NUL (\u0000)`}
	}
	b.WriteRune(r)
	return n, nil
}

// simpleEscape returns the character \c stands for.
func simpleEscape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// hex4 reads four hex digits at src[i].
func hex4(src string, i int) (rune, bool) {
	if i+4 > len(src) {
		return 0, false
	}
	n, err := strconv.ParseUint(src[i:i+4], 16, 16)
	return rune(n), err == nil
}
