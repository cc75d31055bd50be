package wire

import "math/rand/v2"

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
	hi, lo := rand.Uint64(), rand.Uint64()
	var s [IDLen]byte
	for i, at := range idDigits {
		w := hi
		if i >= 16 {
			w = lo
		}
		s[at] = lowerHex[w>>(60-4*(i%16))&0xF]
	}
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return append(dst, s[:]...)
}

const lowerHex = "0123456789abcdef"

// idDigits are the places of an identifier's 32 hex digits, around its four dashes.
var idDigits = func() (at [32]uint8) {
	n := 0
	for i := range IDLen {
		if i != 8 && i != 13 && i != 18 && i != 23 {
			at[n] = uint8(i)
			n++
		}
	}
	return at
}()
