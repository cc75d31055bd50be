package reference

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// keyPieces are the pieces random keys are made of: ASCII around the bytes that matter,
// characters on both sides of the UTF-16 surrogate inversion (U+E000..U+FFFF against
// U+10000 and above), and bytes that are not UTF-8.
var keyPieces = []string{
	"", "a", "b", "z", "A", "0", "9", "~", "\x00", "\x7f", "'", " ",
	"é", "ß", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uff21", "\uffff", "𝄞", "\U0010ffff",
	"\x80", "\xc3", "\xed\xa0\x80", "\xff",
	"Department", "00000123", "00000124",
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

// checkKeyOrder fails when compareKeys or keyPrefix disagree with api.CompareKeyStrings.
func checkKeyOrder(t *testing.T, a, b string) {
	want := sign(api.CompareKeyStrings(a, b))
	if got := sign(compareKeys(a, b)); got != want {
		t.Fatalf("compareKeys(%q, %q) = %d, api.CompareKeyStrings says %d", a, b, got, want)
	}
	pa, pb := keyPrefix(a), keyPrefix(b)
	if (pa < pb && want >= 0) || (pa > pb && want <= 0) {
		t.Fatalf("keyPrefix(%q) = %016x, keyPrefix(%q) = %016x, but api.CompareKeyStrings says %d", a, pa, b, pb, want)
	}
}

func TestETagMatchesTimeFormatting(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	edges := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1600, 2, 29, 23, 59, 59, 999999900, time.UTC),
		time.Date(1600, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1900, 2, 28, 12, 0, 0, 0, time.UTC),
		time.Date(1900, 3, 1, 12, 0, 0, 0, time.UTC),
		time.Date(2000, 2, 29, 1, 2, 3, 400, time.UTC),
		time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
	}
	ticks := []int64{-1, -ticksPerDay - 7, maxFastETagTick, maxFastETagTick + 1}
	for _, e := range edges {
		ticks = append(ticks, ticksOf(e), ticksOf(e)+1, ticksOf(e)-1)
	}
	for range 100_000 {
		ticks = append(ticks, r.Int64N(maxFastETagTick+1))
	}
	for _, k := range ticks {
		want := string(appendETagSlow(nil, k))
		if got := formatETag(k); got != want {
			t.Fatalf("formatETag(%d) = %s, want %s", k, got, want)
		}
		if len(want) != etagLength {
			t.Fatalf("formatETag(%d) = %s, not %d bytes", k, want, etagLength)
		}
		body := make([]byte, bodyHeader)
		setBodyTimestamp(body, k)
		if bodyTicks(string(body)) != k || bodyETagOf(string(body)) != want {
			t.Fatalf("setBodyTimestamp(%d) wrote %q", k, body)
		}
	}
}

// checkKey's ASCII loop answers as the general check does.
func TestCheckKeyASCIIAgreesWithGeneralCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	for range 20_000 {
		b := make([]byte, r.IntN(4)*r.IntN(300))
		for i := range b {
			b[i] = byte(r.IntN(128))
			if r.IntN(4) > 0 {
				b[i] = 'a' + byte(r.IntN(26))
			}
		}
		key := string(b)
		if got, want := checkKey(key) == nil, checkNonASCIIKey(key) == nil; got != want {
			t.Fatalf("checkKey(%q) valid = %v, general check says %v", key, got, want)
		}
	}
}
