package wire

import (
	"crypto/rand"
	"encoding/hex"
)

// NewID returns a random identifier in the 8-4-4-4-12 hex form the service uses for request
// ids, client request ids and multipart boundaries.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}
