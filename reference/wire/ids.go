package wire

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
)

// IDLen is the length of an identifier NewID returns.
const IDLen = 36

// NewID returns a random identifier in the 8-4-4-4-12 hex form the service uses for request
// ids, client request ids and multipart boundaries. Its bits come from math/rand/v2's
// ChaCha8 generator, seeded from the system's entropy, which needs no system call: the ids
// must be unique, not secret.
func NewID() string {
	var room [IDLen]byte
	return string(AppendID(room[:0]))
}

// AppendID appends a new identifier of NewID's form to dst.
func AppendID(dst []byte) []byte {
	return AppendIDOf(dst, rand.Uint64(), rand.Uint64())
}

// AppendIDOf appends the identifier of NewID's form whose 128 bits are hi and lo, in that
// order, to dst: distinct bits give distinct identifiers.
func AppendIDOf(dst []byte, hi, lo uint64) []byte {
	n := len(dst)
	dst = slices.Grow(dst, IDLen)[:n+IDLen]
	s := dst[n : n+IDLen : n+IDLen]
	// Each word of hex digits is written whole, or as two halves around a hyphen.
	w1, w2 := hexWord(uint32(hi)), hexWord(uint32(lo>>32))
	binary.BigEndian.PutUint64(s[0:8], hexWord(uint32(hi>>32)))
	s[8] = '-'
	binary.BigEndian.PutUint32(s[9:13], uint32(w1>>32))
	s[13] = '-'
	binary.BigEndian.PutUint32(s[14:18], uint32(w1))
	s[18] = '-'
	binary.BigEndian.PutUint32(s[19:23], uint32(w2>>32))
	s[23] = '-'
	binary.BigEndian.PutUint32(s[24:28], uint32(w2))
	binary.BigEndian.PutUint64(s[28:36], hexWord(uint32(lo)))
	return dst
}

// hexWord returns the eight lower-case hex digits of v as the bytes of a word, the most
// significant digit in its most significant byte.
func hexWord(v uint32) uint64 {
	// One nibble to a byte, in order.
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f
	// '0'+n below ten, 'a'+n-10 from ten on.
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101
	return x + 0x3030303030303030 + letters*('a'-'0'-10)
}
