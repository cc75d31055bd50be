package odata

import (
	"unicode"
	"unicode/utf8"
)

// TokenKind classifies one token of a $filter text as Tokens returns it.
type TokenKind uint8

// The kinds of token.
const (
	// TokenWord is a property name or a keyword (and, eq, not, true, null, …) as written.
	TokenWord TokenKind = iota + 1
	// TokenLiteral is a constant: 'text' (quotes doubled inside), a number, or a typed
	// literal (datetime'…', guid'…', X'…').
	TokenLiteral
	// TokenOpen and TokenClose are the parentheses.
	TokenOpen
	TokenClose
	// TokenOther is text the service's lexer refuses, up to the next space or parenthesis
	// (a quoted part included).
	TokenOther
)

// Token is one token of a $filter text: its kind, its text as written and its byte offsets
// in the text.
type Token struct {
	Kind       TokenKind
	Text       string
	Start, End int
}

// Tokens splits a $filter text into tokens with the lexer ParseFilter uses, so that a
// client that rewrites a filter sees the words the service sees. Where the lexer refuses the
// text, Tokens does not stop: the refused word is one TokenOther and lexing goes on after
// it, so that every word of a malformed filter is still seen.
func Tokens(filter string) []Token {
	var out []Token
	l := lexer{src: filter}
	for {
		l.skipSpace()
		start := l.pos
		t, err := l.next()
		if err != nil {
			l.pos = start
			l.otherWord()
			out = append(out, Token{Kind: TokenOther, Text: filter[start:l.pos], Start: start, End: l.pos})
			continue
		}
		var kind TokenKind
		switch t.kind {
		case tokEOF:
			return out
		case tokIdent:
			kind = TokenWord
		case tokLiteral:
			kind = TokenLiteral
		case tokLParen:
			kind = TokenOpen
		case tokRParen:
			kind = TokenClose
		}
		out = append(out, Token{Kind: kind, Text: filter[t.start:t.end], Start: t.start, End: t.end})
	}
}

// otherWord moves past a word the lexer refused: up to the next space or parenthesis, a
// quoted part (with doubled quotes) taken whole, and at least one character.
func (l *lexer) otherWord() {
	start := l.pos
	for l.pos < len(l.src) {
		r, size := utf8.DecodeRuneInString(l.src[l.pos:])
		if unicode.IsSpace(r) || r == '(' || r == ')' {
			break
		}
		l.pos += size
		if r != '\'' {
			continue
		}
		for l.pos < len(l.src) {
			if l.src[l.pos] == '\'' {
				if l.pos+1 < len(l.src) && l.src[l.pos+1] == '\'' {
					l.pos += 2
					continue
				}
				l.pos++
				break
			}
			l.pos++
		}
	}
	if l.pos == start {
		_, size := utf8.DecodeRuneInString(l.src[l.pos:])
		l.pos += size
	}
}
