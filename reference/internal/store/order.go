package store

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unsafe"

	"github.com/tableconform/conform/reference/api"
)

// CompareKeys orders key strings exactly as api.CompareKeyStrings does (ordinal by UTF-16
// code unit; the order is api's, not the store's), faster: it finds the first differing byte eight bytes at a time, and when both
// differing bytes are ASCII the byte order is the answer (an ASCII byte is a whole rune
// on either side, and below every other rune in both UTF-8 and UTF-16). Anything else is
// left to api.CompareKeyStrings.
func CompareKeys(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		x, y := load64(a, i), load64(b, i)
		if x != y {
			i += bits.TrailingZeros64(x^y) / 8
			return compareAt(a, b, i)
		}
	}
	if i < n && n >= 8 {
		// The last eight bytes, overlapping bytes already known equal.
		j := n - 8
		if x, y := load64(a, j), load64(b, j); x != y {
			return compareAt(a, b, j+bits.TrailingZeros64(x^y)/8)
		}
		i = n
	}
	for ; i < n; i++ {
		if a[i] != b[i] {
			return compareAt(a, b, i)
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// compareAt orders a and b, which first differ at byte i.
func compareAt(a, b string, i int) int {
	x, y := a[i], b[i]
	if x < 0x80 && y < 0x80 {
		if x < y {
			return -1
		}
		return 1
	}
	return api.CompareKeyStrings(a, b)
}

// load64 returns the eight bytes of s at i as a little-endian word; i+8 <= len(s).
func load64(s string, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), i))[:])
}

// keyPrefix returns a word whose unsigned order agrees with CompareKeys wherever two words
// differ: the first eight bytes of key, big endian, stopped at the first non-ASCII byte.
// A key shorter than eight bytes is padded with 0x00 (a proper prefix sorts first); from a
// non-ASCII byte on, the word is filled with 0xFF (every non-ASCII character sorts above
// every ASCII one, in UTF-8 and in UTF-16 alike). Equal words decide nothing.
func keyPrefix(key string) uint64 {
	var w uint64
	for i := 0; i < 8; i++ {
		var c uint64
		switch {
		case i >= len(key):
			c = 0
		case key[i] >= 0x80:
			return w<<(8*(8-i)) | (1<<(8*(8-i)) - 1)
		default:
			c = uint64(key[i])
		}
		w = w<<8 | c
	}
	return w
}

// keyPrefix2 extends keyPrefix to sixteen bytes: the unsigned order of (first, second),
// first word first, agrees with CompareKeys wherever two pairs differ. second is the
// keyPrefix of the bytes after the eighth when the first eight are ASCII, 0 when the key
// ends before them (a proper prefix sorts first), and all ones when first stopped at a
// non-ASCII byte (equal firsts then have equal seconds: they decide nothing).
func keyPrefix2(key string) (first, second uint64) {
	if len(key) >= 16 {
		if a, b := load64(key, 0), load64(key, 8); (a|b)&0x8080808080808080 == 0 {
			return bits.ReverseBytes64(a), bits.ReverseBytes64(b) // sixteen ASCII bytes
		}
	}
	first = keyPrefix(key)
	for i := 0; i < min(len(key), 8); i++ {
		if key[i] >= 0x80 {
			return first, math.MaxUint64
		}
	}
	if len(key) <= 8 {
		return first, 0
	}
	return first, keyPrefix(key[8:])
}
