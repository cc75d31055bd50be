package odata

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
)

// tokenKind classifies one token of a $filter expression.
type tokenKind uint8

const (
	tokEOF     tokenKind = iota
	tokIdent             // property names and keywords (and, or, not, eq, ..., true, false, null)
	tokLiteral           // a constant: string, number or typed literal (datetime'..', guid'..', X'..')
	tokLParen
	tokRParen
)

// token is one lexed token. start and end are byte offsets into the filter text.
type token struct {
	kind       tokenKind
	start, end int
	text       string    // the identifier (tokIdent)
	val        api.Value // the constant (tokLiteral)
}

// lexer scans a $filter expression one token at a time.
type lexer struct {
	src string
	pos int // byte offset of the next unread character
}

// syntaxError is the service's answer to a malformed filter: InvalidInput with the position
// counted in UTF-16 code units, as the .NET-based service counts characters. The position is
// where the lexer stood when the error was found, i.e. just past the offending token: live
// Storage answers position 7 for 'aaa bbb ccc' (EVIDENCE.md 3.1, REC test_query_invalid_filter)
// and position 23 for 'property1 eq 1'invalid” (the end of the stray string literal,
// Andrei15193/CloudStub TableClientQueryTests, run against a live account). For a character
// that cannot start any token the position is that character's own.
func syntaxError(src string, byteOffset int) error {
	return errFilterSyntax(src, utf16Offset(src, byteOffset))
}

// utf16Offset converts a byte offset into src to a count of UTF-16 code units. Invalid UTF-8
// bytes count as one unit each.
func utf16Offset(src string, byteOffset int) int {
	if byteOffset > len(src) {
		byteOffset = len(src)
	}
	n := 0
	for i := 0; i < byteOffset; {
		r, size := utf8.DecodeRuneInString(src[i:])
		if r >= 0x10000 && size == 4 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// next scans the next token.
func (l *lexer) next() (token, error) {
	l.skipSpace()
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, start: start, end: start}, nil
	}
	c := l.src[l.pos]
	switch {
	case c == '(':
		l.pos++
		return token{kind: tokLParen, start: start, end: l.pos}, nil
	case c == ')':
		l.pos++
		return token{kind: tokRParen, start: start, end: l.pos}, nil
	case c == '\'':
		s, err := l.quoted()
		if err != nil {
			return token{}, err
		}
		return token{kind: tokLiteral, start: start, end: l.pos, val: api.String(s)}, nil
	case isDigit(c) || (c == '-' && l.pos+1 < len(l.src) && isDigit(l.src[l.pos+1])):
		return l.number()
	}
	r, size := utf8.DecodeRuneInString(l.src[l.pos:])
	if !isIdentStart(r) {
		return token{}, syntaxError(l.src, start)
	}
	l.pos += size
	for l.pos < len(l.src) {
		r, size = utf8.DecodeRuneInString(l.src[l.pos:])
		if !isIdentPart(r) {
			break
		}
		l.pos += size
	}
	ident := l.src[start:l.pos]
	if l.pos < len(l.src) && l.src[l.pos] == '\'' {
		return l.typedLiteral(start, ident)
	}
	return token{kind: tokIdent, start: start, end: l.pos, text: ident}, nil
}

func (l *lexer) skipSpace() {
	for l.pos < len(l.src) {
		r, size := utf8.DecodeRuneInString(l.src[l.pos:])
		if !unicode.IsSpace(r) {
			return
		}
		l.pos += size
	}
}

// quoted reads a single-quoted string starting at l.pos; an embedded quote is doubled
// (EVIDENCE.md 3.1). An unterminated string is a syntax error at the end of the text.
func (l *lexer) quoted() (string, error) {
	l.pos++ // opening quote
	var b strings.Builder
	for {
		i := strings.IndexByte(l.src[l.pos:], '\'')
		if i < 0 {
			l.pos = len(l.src)
			return "", syntaxError(l.src, l.pos)
		}
		b.WriteString(l.src[l.pos : l.pos+i])
		l.pos += i + 1
		if l.pos < len(l.src) && l.src[l.pos] == '\'' {
			b.WriteByte('\'')
			l.pos++
			continue
		}
		return b.String(), nil
	}
}

// number reads an Int32 (30, -5), an Int64 (123L) or a Double (100.25, 1e3, 1.0, 3D).
// The L and D suffixes are accepted in either case, as OData v3 defines them; live Storage
// accepts 3D (CloudStub's comparison tests send Double constants that way). A constant that
// does not fit its type is a syntax error at its end.
func (l *lexer) number() (token, error) {
	start := l.pos
	if l.src[l.pos] == '-' {
		l.pos++
	}
	l.digits()
	isFloat := false
	if l.pos+1 < len(l.src) && l.src[l.pos] == '.' && isDigit(l.src[l.pos+1]) {
		isFloat = true
		l.pos++
		l.digits()
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		j := l.pos + 1
		if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if j < len(l.src) && isDigit(l.src[j]) {
			isFloat = true
			l.pos = j
			l.digits()
		}
	}
	text := l.src[start:l.pos]
	suffix := byte(0)
	if l.pos < len(l.src) {
		switch l.src[l.pos] {
		case 'L', 'l', 'D', 'd':
			suffix = l.src[l.pos] | 0x20
			l.pos++
		}
	}
	tok := token{kind: tokLiteral, start: start, end: l.pos}
	switch {
	case suffix == 'l':
		if isFloat {
			return token{}, syntaxError(l.src, l.pos)
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return token{}, syntaxError(l.src, l.pos)
		}
		tok.val = api.Int64(n)
	case suffix == 'd' || isFloat:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) {
			return token{}, syntaxError(l.src, l.pos)
		}
		tok.val = api.Double(f)
	default:
		n, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return token{}, syntaxError(l.src, l.pos)
		}
		tok.val = api.Int32(int32(n))
	}
	return tok, nil
}

func (l *lexer) digits() {
	for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
		l.pos++
	}
}

// typedLiteral reads prefix'...' where prefix is datetime, guid, X, x or binary (EVIDENCE.md
// 3.1). Any other prefix, or a body that is not a valid value of the type, is a syntax
// error at the end of the literal.
func (l *lexer) typedLiteral(start int, prefix string) (token, error) {
	body, err := l.quoted()
	if err != nil {
		return token{}, err
	}
	var v api.Value
	ok := false
	switch prefix {
	case "datetime":
		var t api.Value
		t, ok = parseDateTimeLiteral(body)
		v = t
	case "guid":
		var g string
		g, ok = api.CanonicalGuid(body)
		v = api.Guid(g)
	case "X", "x", "binary":
		// CloudStub's live tests send x'..' in lower case; SDKs send X'..'.
		b, err := hex.DecodeString(body)
		ok = err == nil
		v = api.Binary(b)
	}
	if !ok {
		return token{}, syntaxError(l.src, l.pos)
	}
	return token{kind: tokLiteral, start: start, end: l.pos, val: v}, nil
}

// parseDateTimeLiteral accepts the DateTime forms of api.ParseDateTime (EVIDENCE.md 1.5, DTF)
// except a year written 0000; a date alone is midnight UTC.
func parseDateTimeLiteral(s string) (api.Value, bool) {
	t, ok := api.ParseDateTime(s)
	if !ok || s[:4] == "0000" {
		return api.Value{}, false
	}
	return api.DateTime(t), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdentStart and isIdentPart follow the C# identifier rules that property names follow
// (EVIDENCE.md 1.3): a letter or underscore, then letters, digits and underscores.
func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
