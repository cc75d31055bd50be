package api

import (
	"unicode/utf8"

	"github.com/tableconform/conform/reference/spec"
)

// EntitySize returns e's size by the documented accounting (SIZEBLOG; EVIDENCE.md 1.4; the
// spec.Size* constants): 4 bytes, twice the UTF-16 length of both keys, and for each stored
// property 8 bytes, twice the UTF-16 length of its name and ValueSize of its value. A null
// property and a custom property named Timestamp are not stored (EVIDENCE.md 1.5) and do not
// count. The limit it is checked against is spec.MaxEntityBytes.
func EntitySize(e Entity) int {
	size := KeysSize(e.PartitionKey, e.RowKey)
	for name, v := range e.Properties {
		if v.Null || name == timestampName {
			continue
		}
		size += PropertySize(name, v)
	}
	return size
}

// KeysSize returns the size of an entity with keys pk and rk and no stored property, by
// EntitySize's accounting: 4 bytes and twice the UTF-16 length of both keys.
func KeysSize(pk, rk string) int {
	return spec.SizeEntityOverhead + 2*(UTF16Len(pk)+UTF16Len(rk))
}

// PropertySize returns what one stored property adds to its entity's size, by EntitySize's
// accounting: 8 bytes, twice the UTF-16 length of its name and ValueSize of its value.
func PropertySize(name string, v Value) int {
	return PropertySizeOf(name, ValueSize(v))
}

// PropertySizeOf is PropertySize of a property whose value's size (ValueSize) is valueSize.
func PropertySizeOf(name string, valueSize int) int {
	return PropertySizeFrom(UTF16Len(name), valueSize)
}

// PropertySizeFrom is PropertySize of a property whose name is nameUnits UTF-16 code units
// long and whose value's size is valueSize.
func PropertySizeFrom(nameUnits, valueSize int) int {
	return spec.SizePropertyOverhead + 2*nameUnits + valueSize
}

// StringSize is ValueSize of a String of units UTF-16 code units.
func StringSize(units int) int { return spec.SizeStringOverhead + 2*units }

// timestampName is the system property a sent entity may carry among its properties; the
// service ignores it.
const timestampName = "Timestamp"

// ValueSize returns the size of v's payload by the documented accounting (SIZEBLOG; EVIDENCE.md
// 1.4): a String is 4 bytes and twice its UTF-16 length, a Binary 4 bytes and its length,
// every other type its fixed size. A null value or one of no EDM type is 0 bytes.
func ValueSize(v Value) int {
	if v.Null {
		return 0
	}
	switch v.Type {
	case EdmString:
		return StringSize(UTF16Len(v.Str))
	case EdmBinary:
		return spec.SizeBinaryOverhead + len(v.Str)
	case EdmDateTime:
		return spec.SizeDateTime
	case EdmGuid:
		return spec.SizeGuid
	case EdmDouble:
		return spec.SizeDouble
	case EdmInt32:
		return spec.SizeInt32
	case EdmInt64:
		return spec.SizeInt64
	case EdmBoolean:
		return spec.SizeBoolean
	}
	return 0
}

// UTF16Len returns the length of s in UTF-16 code units, the unit in which the service counts
// characters: one per character of the Basic Multilingual Plane, two for any other. A byte
// that is not valid UTF-8 counts as one unit, as the U+FFFD it decodes to.
func UTF16Len(s string) int {
	i := 0
	for ; i+16 <= len(s); i += 16 { // sixteen ASCII bytes at a time
		b := s[i : i+16]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		v := uint64(b[8]) | uint64(b[9])<<8 | uint64(b[10])<<16 | uint64(b[11])<<24 |
			uint64(b[12])<<32 | uint64(b[13])<<40 | uint64(b[14])<<48 | uint64(b[15])<<56
		if (w|v)&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return i + utf16LenOf(s[i:])
		}
	}
	return len(s)
}

// utf16LenOf is UTF16Len rune by rune.
func utf16LenOf(s string) int {
	n := 0
	for _, r := range s { // an invalid byte is one U+FFFD
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}
