package wire

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
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
	var b [16]byte
	binary.LittleEndian.PutUint64(b[0:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:16], rand.Uint64())
	var s [IDLen]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return append(dst, s[:]...)
}
