package wire

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"testing"
)

// Ids have the service's form and do not repeat.
func TestNewIDFormAndUniqueness(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i := 0; i < 100000; i++ {
		id := NewID()
		if !form.MatchString(id) || seen[id] {
			t.Fatalf("id %d: %q (seen before: %v)", i, id, seen[id])
		}
		seen[id] = true
	}
}

// hexWord writes a word's digits as strconv does.
func TestHexWord(t *testing.T) {
	for _, v := range []uint32{0, 1, 9, 10, 15, 16, 0xabcdef01, 0x12345678, 0x9fa0b1c2, 0xffffffff} {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], hexWord(v))
		if want := fmt.Sprintf("%08x", v); string(b[:]) != want {
			t.Errorf("hexWord(%#x) = %q, want %q", v, b[:], want)
		}
	}
}
