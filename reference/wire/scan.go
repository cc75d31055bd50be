package wire

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/spec"
)

// maxNesting bounds how deeply arrays and objects nest inside a member's value, as
// encoding/json bounds it, so that a hostile body cannot exhaust the stack.
const maxNesting = 10000

// member is one name/value pair of a JSON object, in document order. The value is
// data[start:end] of the document it was read from.
type member struct {
	name       string
	start, end int
	// plain says that a string value has no escape and only ASCII bytes, so that its text
	// is the document's bytes between the quotes.
	plain bool
	// items, for the `value` member of a set answer, are the array's elements read in
	// the same pass (see document.items).
	items []item
}

// item is one element of the `value` array of a set answer: its members, or the error
// that refuses it (not an object, a duplicate name) once the whole document is known to be
// valid JSON.
type item struct {
	members []member
	err     error
}

// document reads one JSON object in a single pass: it validates the syntax, finds every
// member's value span and name, and refuses duplicate names. Names and plain string values
// are substrings of one copy of the document, so decoding allocates little more than the
// entity it builds.
type document struct {
	data []byte
	text string // string(data)
	pos  int
	// setItems asks for the `value` member's array elements to be read as objects.
	setItems bool
	// top, when not nil, is the empty list the members of the top-level object are
	// appended to.
	top []member
}

// readObject reads data as one JSON object, refusing duplicate names with 400
// DuplicatePropertiesSpecified (TERR) and anything that is not one object with 400
// InvalidInput.
func readObject(data []byte) (document, []member, error) {
	return readDocument(data, false, nil)
}

// memberLists recycles the member lists of request entities (DecodeRequestEntity), which
// no caller keeps: each is emptied before it is put back, so that it holds on to no text.
var memberLists = sync.Pool{New: func() any { return new([]member) }}

// maxPooledMembers bounds the member lists kept for reuse.
const maxPooledMembers = 64

// readDocument returns the document by value, so that a caller that keeps it no longer than
// the decoding keeps it on its stack. The top-level object's members are appended to top
// when it is not nil.
func readDocument(data []byte, setItems bool, top []member) (document, []member, error) {
	d := document{data: data, text: string(data), setItems: setItems, top: top}
	ms, err := d.read()
	return d, ms, err
}

func (d *document) read() ([]member, error) {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return nil, d.syntaxError("unexpected end of JSON input")
	}
	if d.data[d.pos] != '{' {
		if _, err := d.value(1); err != nil {
			return nil, err
		}
		return nil, spec.ErrInvalidInput.Newf("The request body must be a JSON object.")
	}
	ms, dup, err := d.object(0, true)
	if err != nil {
		return nil, err
	}
	if dup != nil {
		return nil, dup
	}
	d.skipSpace()
	if d.pos != len(d.data) {
		return nil, spec.ErrInvalidInput.Newf("Unexpected data after the JSON object.")
	}
	return ms, nil
}

func (d *document) syntaxError(what string) error {
	return spec.ErrInvalidInput.Newf("The JSON payload is not valid: %s.", what)
}

func (d *document) unexpected(context string) error {
	if d.pos >= len(d.data) {
		return d.syntaxError("unexpected end of JSON input")
	}
	return d.syntaxError("invalid character " + strconv.QuoteRune(rune(d.data[d.pos])) + " " + context + " at offset " + strconv.Itoa(d.pos))
}

func (d *document) skipSpace() { d.pos = spaceEnd(d.data, d.pos) }

// spaceEnd is the index of the first byte of data from i on that is not JSON white space,
// or len(data).
func spaceEnd(data []byte, i int) int {
	for i < len(data) && data[i] <= ' ' && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// object reads the object at d.pos (a '{'), whose members' values nest at depth+1. With
// stopAtDuplicate a duplicate name ends the read with its error, as a reader that stops at
// the first fault would; without it the read goes on to the end of the object, so that a
// syntax error later in the document takes precedence, and the duplicate is returned as dup.
func (d *document) object(depth int, stopAtDuplicate bool) (ms []member, dup, err error) {
	d.pos++ // '{'
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return nil, nil, nil
	}
	var seen map[string]struct{}
	for {
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return nil, nil, d.unexpected("looking for beginning of object key string")
		}
		ns := d.pos
		plain, err := d.str()
		if err != nil {
			return nil, nil, err
		}
		name := d.stringAt(ns, d.pos, plain)
		d.skipSpace()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return nil, nil, d.unexpected("after object key")
		}
		d.pos++
		d.skipSpace()
		m := member{name: name, start: d.pos}
		if d.setItems && depth == 0 && name == "value" && d.pos < len(d.data) && d.data[d.pos] == '[' {
			if m.items, err = d.items(depth + 1); err != nil {
				return nil, nil, err
			}
			if m.items == nil {
				m.items = []item{}
			}
		} else if m.plain, err = d.value(depth + 1); err != nil {
			return nil, nil, err
		}
		m.end = d.pos
		if dup == nil {
			if isDuplicate(ms, &seen, name) {
				dup = spec.ErrDuplicateProperties.New()
				if stopAtDuplicate {
					return nil, dup, nil
				}
			}
			if ms == nil {
				if depth == 0 && d.top != nil {
					ms = d.top[:0]
				} else {
					ms = make([]member, 0, 8) // an entity has at least the keys, Timestamp and etag
				}
			}
			ms = append(ms, m)
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, nil, d.unexpected("")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case '}':
			d.pos++
			return ms, dup, nil
		default:
			return nil, nil, d.unexpected("after object key:value pair")
		}
	}
}

// isDuplicate reports whether name is among ms: by a linear search while the object is
// small, by a set built on demand once it is not.
func isDuplicate(ms []member, seen *map[string]struct{}, name string) bool {
	const linear = 16
	if len(ms) < linear {
		for i := range ms {
			if ms[i].name == name {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]struct{}, 2*len(ms))
		for i := range ms {
			(*seen)[ms[i].name] = struct{}{}
		}
	}
	if _, ok := (*seen)[name]; ok {
		return true
	}
	(*seen)[name] = struct{}{}
	return false
}

// items reads the array at d.pos as the elements of a set answer: objects are read into
// members, anything else is validated and refused in its item.
func (d *document) items(depth int) ([]item, error) {
	d.pos++ // '['
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return nil, nil
	}
	var out []item
	for {
		if depth+1 > maxNesting {
			return nil, d.syntaxError("exceeded max depth")
		}
		var it item
		if d.pos < len(d.data) && d.data[d.pos] == '{' {
			ms, dup, err := d.object(depth+1, false)
			if err != nil {
				return nil, err
			}
			it.members, it.err = ms, dup
		} else {
			if _, err := d.value(depth + 1); err != nil {
				return nil, err
			}
			it.err = spec.ErrInvalidInput.Newf("The request body must be a JSON object.")
		}
		out = append(out, it)
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.unexpected("")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case ']':
			d.pos++
			return out, nil
		default:
			return nil, d.unexpected("after array element")
		}
	}
}

// value validates the value at d.pos, at nesting depth (1 for a member of the top-level
// object), and moves past it. plain reports a string without escapes or non-ASCII bytes.
func (d *document) value(depth int) (plain bool, err error) {
	if d.pos >= len(d.data) {
		return false, d.unexpected("")
	}
	switch c := d.data[d.pos]; c {
	case '"':
		return d.str()
	case '{', '[':
		if depth > maxNesting {
			return false, d.syntaxError("exceeded max depth")
		}
		if c == '{' {
			_, _, err := d.object(depth, false)
			return false, err
		}
		return false, d.array(depth)
	case 't':
		return false, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return false, d.literal("null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return false, d.number()
		}
	}
	return false, d.unexpected("looking for beginning of value")
}

func (d *document) array(depth int) error {
	d.pos++ // '['
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == ']' {
		d.pos++
		return nil
	}
	for {
		if _, err := d.value(depth + 1); err != nil {
			return err
		}
		d.skipSpace()
		if d.pos >= len(d.data) {
			return d.unexpected("")
		}
		switch d.data[d.pos] {
		case ',':
			d.pos++
			d.skipSpace()
		case ']':
			d.pos++
			return nil
		default:
			return d.unexpected("after array element")
		}
	}
}

func (d *document) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if d.pos >= len(d.data) || d.data[d.pos] != word[i] {
			return d.unexpected("in literal " + word)
		}
		d.pos++
	}
	return nil
}

// number reads the number at d.pos (numberEnd).
func (d *document) number() error {
	end, broken := numberEnd(d.data, d.pos)
	d.pos = end
	if broken != "" {
		return d.unexpected(broken)
	}
	return nil
}

// numberEnd reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? (RFC 8259) at data[i], a '-'
// or a digit: it returns the end of the number, or where it is broken and what was being
// read there.
func numberEnd(data []byte, i int) (end int, broken string) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digitsEnd(data, i)
	default:
		return i, "in numeric literal"
	}
	if i < len(data) && data[i] == '.' {
		if i = digitsEnd(data, i+1); !isDigitByte(data[i-1]) {
			return i, "after decimal point in numeric literal"
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i = digitsEnd(data, i); !isDigitByte(data[i-1]) {
			return i, "in exponent of numeric literal"
		}
	}
	return i, ""
}

// digitsEnd is the index of the first byte of data from i on that is not a digit.
func digitsEnd(data []byte, i int) int {
	for i < len(data) && isDigitByte(data[i]) {
		i++
	}
	return i
}

// str reads the string at d.pos (a '"'): control characters are refused, escapes must be
// those of RFC 8259. plain reports no escape and only ASCII.
func (d *document) str() (plain bool, err error) {
	d.pos++ // '"'
	if end, plain, ok := quickString(d.data[d.pos:]); ok {
		d.pos += end + 1
		return plain, nil
	}
	plain = true
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return plain, nil
		case c < 0x20:
			return false, d.unexpected("in string literal")
		case c == '\\':
			plain = false
			d.pos++
			if d.pos >= len(d.data) {
				return false, d.unexpected("")
			}
			switch d.data[d.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.pos++
			case 'u':
				d.pos++
				for i := 0; i < 4; i++ {
					if d.pos >= len(d.data) || !isHex(d.data[d.pos]) {
						return false, d.unexpected("in \\u hexadecimal character escape")
					}
					d.pos++
				}
			default:
				return false, d.unexpected("in string escape code")
			}
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			d.pos++
		}
	}
	return false, d.unexpected("")
}

// quickString finds the closing quote of a string whose text s starts, when the text has no
// escape and no control character: the common case. A short string ends in its first four
// words, read eight bytes at once; a longer one is searched for its quote and backslashes
// with bytes.IndexByte and checked by plainText. Text with non-ASCII bytes is read byte by
// byte (plain false). ok false leaves the string to the byte-by-byte reader (escapes,
// errors).
func quickString(s []byte) (end int, plain, ok bool) {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i < 32 && i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i : i+8])
		// The high bit of a byte of flags is set for a quote, a backslash, a byte below
		// 0x20 and a byte from 0x80 on, and may be for a byte after one of them (a borrow):
		// the lowest set bit is the first such byte. (x-ones)&^x would find the zero bytes
		// of x: the &^x only clears bytes from 0x80 on, which w itself flags.
		q, b := w^(ones*'"'), w^(ones*'\\')
		if flags := ((q - ones) | (b - ones) | (w - ones*0x20) | w) & highs; flags != 0 {
			if k := i + bits.TrailingZeros64(flags)/8; s[k] == '"' {
				return k, true, true // no byte before it was flagged: all ASCII
			}
			return bytewiseString(s)
		}
	}
	if len(s)-i < 8 {
		// The end of the document, or nearly.
		for ; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"':
				return i, true, true
			case c == '\\' || c < 0x20:
				return 0, false, false
			case c >= utf8.RuneSelf:
				return bytewiseString(s)
			}
		}
		return 0, false, false
	}
	rest := s[i:]
	end = bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return 0, false, false
	}
	if !plainText(rest[:end]) {
		return bytewiseString(s) // a control character or a non-ASCII byte
	}
	return i + end, true, true
}

// plainText reports whether t has no control character and no byte outside ASCII, reading
// 32 bytes at once while it can.
func plainText(t []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// The high bit of a byte of flagged(w) is set for a byte of w below 0x20 or from 0x80
	// on, and may be for a byte after one of them: flags accumulated are still exact.
	flagged := func(w uint64) uint64 { return (w - ones*0x20) | w }
	var flags uint64
	i := 0
	for ; i+32 <= len(t); i += 32 {
		b := t[i : i+32 : i+32]
		flags |= flagged(binary.LittleEndian.Uint64(b)) | flagged(binary.LittleEndian.Uint64(b[8:])) |
			flagged(binary.LittleEndian.Uint64(b[16:])) | flagged(binary.LittleEndian.Uint64(b[24:]))
	}
	for ; i+8 <= len(t); i += 8 {
		flags |= flagged(binary.LittleEndian.Uint64(t[i : i+8]))
	}
	if i < len(t) {
		if len(t) < 8 {
			for _, c := range t {
				if c < 0x20 || c >= utf8.RuneSelf {
					return false
				}
			}
			return flags&highs == 0
		}
		flags |= flagged(binary.LittleEndian.Uint64(t[len(t)-8:])) // the last bytes, again in part
	}
	return flags&highs == 0
}

// bytewiseString is quickString byte by byte.
func bytewiseString(s []byte) (end int, plain, ok bool) {
	plain = true
	for i, c := range s {
		switch {
		case c == '"':
			return i, plain, true
		case c == '\\' || c < 0x20:
			return 0, false, false
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return 0, false, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// stringAt returns the text of the validated string literal data[start:end].
func (d *document) stringAt(start, end int, plain bool) string {
	if plain {
		return d.text[start+1 : end-1]
	}
	inner := d.data[start+1 : end-1]
	if !hasEscape(inner) && utf8.Valid(inner) {
		return d.text[start+1 : end-1]
	}
	return unquote(inner)
}

// stringValue returns the text of member m's value, which is a string literal.
func (d *document) stringValue(m *member) string { return d.stringAt(m.start, m.end, m.plain) }

func hasEscape(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// unquote decodes the inside of a validated string literal as encoding/json does: escapes
// are resolved, a surrogate pair becomes its code point, a lone surrogate and every byte of
// invalid UTF-8 become U+FFFD.
func unquote(s []byte) string {
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			e := s[i+1]
			i += 2
			switch e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := hex4(s[i : i+4])
				i += 4
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if pair := utf16.DecodeRune(r, hex4(s[i+2:i+6])); pair != utf8.RuneError {
							b = utf8.AppendRune(b, pair)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default: // '"', '\\', '/'
				b = append(b, e)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return string(b)
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// singleString reads raw as exactly one JSON string literal (surrounding space allowed),
// for the exported value decoders, whose input no scan has validated.
func singleString(raw []byte) (string, bool) {
	d := &document{data: raw}
	d.skipSpace()
	if d.pos >= len(raw) || raw[d.pos] != '"' {
		return "", false
	}
	start := d.pos
	if _, err := d.str(); err != nil {
		return "", false
	}
	end := d.pos
	d.skipSpace()
	if d.pos != len(raw) {
		return "", false
	}
	inner := raw[start+1 : end-1]
	if !hasEscape(inner) && utf8.Valid(inner) {
		return string(inner), true
	}
	return unquote(inner), true
}
