package wire

import (
	"math"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
)

// The flat reader decodes, in one pass over the body and without a member list, the form
// nearly every write sends: one object of few members whose names are plain ASCII and
// whose values are strings, numbers, true, false or null, with at most one type annotation
// (`name@odata.type`, a string naming a known EDM type) per property. Anything else, and
// every body it would refuse, it leaves to the general reader (readDocument, entityOf),
// which then gives the entity or the error: a body is decoded the same whichever reader
// takes it, and every error is the general reader's.

// flatMaxMembers bounds the members of a flat body, so that they fit an array on the stack
// and duplicates are found by a linear search.
const flatMaxMembers = 16

// flatMember is one member of a flat body. An annotation's base is the name of the property
// it types; a property's is its name.
type flatMember struct {
	base                 string
	valueStart, valueEnd int32
	typ                  api.EdmType // the type an annotation names, or its property's
	annotation           bool
	annotated            bool // a property whose annotation was found
}

// readFlatEntity is DecodeRequestEntityListed of a body in the flat form into *e, which must
// be zero, its properties appended to props[:0]. It returns false, with what it wrote of
// props's array cleared and *e to be overwritten, when data is not in that form or would be
// refused: the general reader decides those.
func readFlatEntity(data []byte, props []api.Property, e *api.ListedEntity) bool {
	if len(data) > math.MaxInt32 {
		return false
	}
	text := string(data)
	var ms [flatMaxMembers]flatMember
	n, annotations, linked := 0, 0, 0
	ascii := true // every string value read is ASCII (names are, or the body is not flat)
	i := spaceEnd(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	if i = spaceEnd(data, i+1); i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			if n == flatMaxMembers || i >= len(data) || data[i] != '"' {
				return false
			}
			m := &ms[n]
			start := i + 1
			end, at, plain := flatName(data, start)
			if !plain {
				return false
			}
			if at < 0 {
				m.base = text[start:end]
			} else {
				// The only '@' is that of a type annotation.
				if text[at:end] != typeSuffix {
					return false
				}
				m.base, m.annotation = text[start:at], true
				annotations++
			}
			if len(m.base) >= len(odataPrefix) && m.base[:len(odataPrefix)] == odataPrefix {
				return false
			}
			if i = spaceAfter(data, end+1); i >= len(data) || data[i] != ':' {
				return false
			}
			if i = spaceAfter(data, i+1); i >= len(data) {
				return false
			}
			m.valueStart = int32(i)
			switch c := data[i]; {
			case c == '"':
				end, plain, found := quickString(data[i+1:])
				if !found || !plain && !utf8.Valid(data[i+1:i+1+end]) {
					return false // escapes and invalid UTF-8 are decoded by the general reader
				}
				ascii = ascii && plain
				i += end + 2
			case c == 't':
				if !wordAt(data, i, "true") {
					return false
				}
				i += len("true")
			case c == 'f':
				if !wordAt(data, i, "false") {
					return false
				}
				i += len("false")
			case c == 'n':
				if !wordAt(data, i, "null") {
					return false
				}
				i += len("null")
			case c == '-' || c >= '0' && c <= '9':
				var broken string
				if i, broken = numberEnd(data, i); broken != "" {
					return false
				}
			default:
				return false
			}
			m.valueEnd = int32(i)
			if m.annotation {
				if data[m.valueStart] != '"' {
					return false
				}
				t, known := edmTypeNamed(text[m.valueStart+1 : m.valueEnd-1])
				if !known {
					return false
				}
				m.typ = t
			}
			// A name met before is a duplicate; the same base is an annotation and its
			// property, in either order.
			for k := range ms[:n] {
				if o := &ms[k]; o.base == m.base {
					if o.annotation == m.annotation {
						return false
					}
					if m.annotation {
						o.typ, o.annotated = m.typ, true
					} else {
						m.typ, m.annotated = o.typ, true
					}
					linked++
				}
			}
			n++
			if i = spaceAfter(data, i); i >= len(data) {
				return false
			}
			if data[i] == '}' {
				i++
				break
			}
			if data[i] != ',' {
				return false
			}
			i = spaceAfter(data, i+1)
		}
	}
	if spaceEnd(data, i) != len(data) || linked != annotations {
		return false // trailing data, or an annotation without its property
	}
	e.Absent = api.AbsentPartitionKey | api.AbsentRowKey | api.AbsentTimestamp
	ps := props[:0]
	for k := range ms[:n] {
		m := &ms[k]
		if m.annotation {
			continue
		}
		raw := data[m.valueStart:m.valueEnd]
		var s string
		if raw[0] == '"' {
			s = text[m.valueStart+1 : m.valueEnd-1]
		}
		switch m.base {
		case PropPartitionKey, PropRowKey:
			if m.annotated && m.typ != api.EdmString || raw[0] != '"' && raw[0] != 'n' {
				return failFlat(props, ps)
			}
			if raw[0] == 'n' {
				continue
			}
			if m.base == PropPartitionKey {
				e.PartitionKey, e.Absent = s, e.Absent&^api.AbsentPartitionKey
			} else {
				e.RowKey, e.Absent = s, e.Absent&^api.AbsentRowKey
			}
			continue
		case PropTimestamp:
			continue // a client's Timestamp is ignored, as in entityOf
		}
		var v api.Value
		var err error
		if m.annotated {
			v, err = scalarOfType(m.typ, raw, s, false)
		} else {
			v, err = scalarOfShape(raw, s)
		}
		if err != nil {
			return failFlat(props, ps)
		}
		ps = append(ps, api.Property{Name: m.base, Value: v})
	}
	api.SortProperties(ps)
	e.Properties = ps
	e.PlainText = ascii
	return true
}

const odataPrefix = "odata."

// flatName finds the closing quote of the member name whose text starts at data[start],
// and its '@' (at is -1 when it has none): plain is false for a name with an escape, a
// control character, a byte outside ASCII or more than one '@', or without its quote.
func flatName(data []byte, start int) (end, at int, plain bool) {
	at = -1
	i := uint(start)
	for {
		for i < uint(len(data)) && nameBytes[data[i]] == nameByte {
			i++
		}
		switch {
		case i >= uint(len(data)):
			return 0, 0, false
		case data[i] == '"':
			return int(i), at, true
		case data[i] == '@' && at < 0:
			at = int(i)
			i++
		default:
			return 0, 0, false
		}
	}
}

// nameBytes classes the bytes of a flat name: nameByte for a byte that stands for itself
// (not a quote, a backslash, an '@', a control character or a byte outside ASCII).
var nameBytes = func() (classes [256]byte) {
	for c := range classes {
		if plainByte[c] && c != '@' { // what a JSON string holds as it is, but the '@'
			classes[c] = nameByte
		}
	}
	return classes
}()

const nameByte = 1

// wordAt reports whether data holds word at i.
func wordAt(data []byte, i int, word string) bool {
	return len(data)-i >= len(word) && string(data[i:i+len(word)]) == word
}

// failFlat clears what readFlatEntity wrote of props's array, into ps or before ps grew
// into an array of its own, and returns false.
func failFlat(props, ps []api.Property) bool {
	if cap(ps) != cap(props) {
		clear(props[:cap(props)])
	}
	clear(ps)
	return false
}

// spaceAfter is spaceEnd with a test of the first byte inlined: tokens of a flat body are
// mostly not separated by white space.
func spaceAfter(data []byte, i int) int {
	if uint(i) < uint(len(data)) && data[uint(i)] <= ' ' {
		return spaceEnd(data, i)
	}
	return i
}
