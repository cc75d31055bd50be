package store

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// keyPieces are the pieces random keys are made of: ASCII around the bytes that matter,
// characters on both sides of the UTF-16 surrogate inversion (U+E000..U+FFFF against
// U+10000 and above), and bytes that are not UTF-8.
var keyPieces = []string{
	"", "a", "b", "z", "A", "0", "9", "~", "\x00", "\x7f", "'", " ",
	"é", "ß", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uff21", "\uffff", "𝄞", "\U0010ffff",
	"\x80", "\xc3", "\xed\xa0\x80", "\xff",
	"Department", "00000123", "00000124", "i00-1-00",
}

func randomKey(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString(keyPieces[r.IntN(len(keyPieces))])
	}
	return b.String()
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

func TestCompareKeysAgreesWithCompareKeyStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		a, b := randomKey(r), randomKey(r)
		if r.IntN(4) == 0 {
			b = a + randomKey(r) // long shared prefixes reach the word-at-a-time loop
			a += randomKey(r)
		}
		checkKeyOrder(t, a, b)
	}
}

func FuzzCompareKeys(f *testing.F) {
	for _, p := range keyPieces {
		f.Add(p, "a"+p)
		f.Add("Department0001"+p, "Department0001\uff21")
	}
	f.Fuzz(checkKeyOrder)
}

// checkKeyOrder fails when CompareKeys or keyPrefix disagree with api.CompareKeyStrings.
func checkKeyOrder(t *testing.T, a, b string) {
	want := sign(api.CompareKeyStrings(a, b))
	if got := sign(CompareKeys(a, b)); got != want {
		t.Fatalf("CompareKeys(%q, %q) = %d, api.CompareKeyStrings says %d", a, b, got, want)
	}
	pa, pb := keyPrefix(a), keyPrefix(b)
	if (pa < pb && want >= 0) || (pa > pb && want <= 0) {
		t.Fatalf("keyPrefix(%q) = %016x, keyPrefix(%q) = %016x, but api.CompareKeyStrings says %d", a, pa, b, pb, want)
	}
	a1, a2 := keyPrefix2(a)
	b1, b2 := keyPrefix2(b)
	if a1 == b1 && ((a2 < b2 && want >= 0) || (a2 > b2 && want <= 0)) {
		t.Fatalf("keyPrefix2(%q) = %016x %016x, keyPrefix2(%q) = %016x %016x, but api.CompareKeyStrings says %d", a, a1, a2, b, b1, b2, want)
	}
}
