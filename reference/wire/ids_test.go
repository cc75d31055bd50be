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

// AppendIDOf writes hi then lo in hex, hyphenated 8-4-4-4-12, after what dst holds.
func TestAppendIDOfDigits(t *testing.T) {
	for _, bits := range [][2]uint64{{0, 0}, {0x0123456789abcdef, 0xfedcba9876543210}, {1<<64 - 1, 1}, {0x9fa0b1c2d3e4f506, 0x1728394a5b6c7d8e}} {
		hi, lo := bits[0], bits[1]
		x := fmt.Sprintf("%016x%016x", hi, lo)
		want := "id " + x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
		for _, dst := range [][]byte{[]byte("id "), append(make([]byte, 0, 64), "id "...)} {
			if got := string(AppendIDOf(dst, hi, lo)); got != want {
				t.Errorf("AppendIDOf(%q, %#x, %#x) = %q, want %q", dst, hi, lo, got, want)
			}
		}
	}
}
