package wire

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
)

// TestAppendersMatchFormatters checks the appending renderers against the string ones they
// replaced on the hot path: doubles, date-times and odata.metadata.
func TestAppendersMatchFormatters(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	doubles := []float64{0, math.Copysign(0, -1), 1, -1, 5, 1e-6, 9.99e-7, 1e21, 1e20, 123456789012345678, 0.1, math.MaxFloat64, math.SmallestNonzeroFloat64}
	for i := 0; i < 2000; i++ {
		doubles = append(doubles, math.Float64frombits(r.Uint64()), r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)), float64(r.Int64N(1<<53)))
	}
	for _, f := range doubles {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		text := FormatDouble(f)
		if !oracleDoubleTextOK(text, f) {
			t.Fatalf("FormatDouble(%v) = %s, which does not read back as that Double", f, text)
		}
		if got, want := needsAnnotation(api.Double(f), false), !strings.ContainsAny(text, ".eE"); got != want {
			t.Fatalf("needsAnnotation(%v) = %v, want %v", f, got, want)
		}
	}
	for i := 0; i < 2000; i++ {
		tm := time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).In(time.FixedZone("z", r.IntN(50000)-25000))
		if i%3 == 0 {
			tm = tm.Truncate(time.Second)
		}
		if got, want := string(appendDateTime(nil, tm)), `"`+api.FormatDateTime(tm)+`"`; got != want {
			t.Fatalf("appendDateTime(%v) = %s, want %s", tm, got, want)
		}
	}
	for _, d := range []Document{
		{ServiceURL: "http://h/acct", Table: "t"},
		{ServiceURL: "http://h/acct/", Table: "t", Select: []string{}},
		{ServiceURL: "https://h\"x/", Table: "t", Select: []string{"a", "b\\c", "é"}},
	} {
		for _, suffix := range []string{"", "/@Element"} {
			want := appendString(nil, d.MetadataURL(d.entitySetFragment()+suffix))
			if got := d.appendMetadataURL(nil, suffix); string(got) != string(want) {
				t.Fatalf("appendMetadataURL(%+v, %q) = %s, want %s", d, suffix, got, want)
			}
		}
	}
}

func FuzzAppendStringMatchesOracle(f *testing.F) {
	for _, s := range []string{"", "plain ascii text of some length", "a\"b\\c\nd\te\x01f", "é\u2028\u2029\xff\xfe", strings.Repeat("x", 17) + "\"" + strings.Repeat("y", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if out := appendString(nil, s); !oracleJSONStringOK(out, s) {
			t.Fatalf("appendString(%q) = %s, which is not that string in JSON", s, out)
		}
	})
}

// escapeByteByByte is appendEscaped's contract written plainly, one character at a time: the
// bytes every answer has held so far, which the word-at-a-time scan must reproduce.
func escapeByteByByte(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20:
				fmt.Fprintf(&b, `\u%04x`, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// TestAppendEscapedMatchesByteByByte puts every byte value at every position of strings of
// every length up to 40 (so each lands in each part of the scan: the 16-byte and 8-byte
// words, the overlapping last word, the bytes after), the bytes that matter in longer
// strings, with a quote after them, then random mixtures.
func TestAppendEscapedMatchesByteByByte(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := string(appendEscaped([]byte("prefix"), s)), "prefix"+escapeByteByByte(s); got != want {
			t.Fatalf("appendEscaped(%q) = %q, want %q", s, got, want)
		}
	}
	for n := 0; n <= 40; n++ {
		for p := 0; p < n; p++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat("a", n))
				b[p] = byte(c)
				check(string(b))
			}
		}
	}
	for n := 41; n <= 80; n++ { // longer strings, with a quote after the byte or in its place
		for p := 0; p < n; p++ {
			for _, c := range []byte{0, 0x1f, 0x20, '"', '\\', 0x7f, 0x80, 0xc3, 0xe2, 0xff} {
				b := []byte(strings.Repeat("a", n))
				b[p] = c
				check(string(b))
				b[n-1-p/2] = '"'
				check(string(b))
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", "~", " ", "\"", "\\", "\n", "\x00", "\x1f", "\x7f", "é", "\u2028", "\u2029", "\xff", "\xe2\x80", "😀", "\ufffd"}
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := r.IntN(50); j > 0; j-- {
			if r.IntN(4) == 0 {
				b.WriteString(pieces[r.IntN(len(pieces))])
			} else {
				b.WriteString(strings.Repeat("x", r.IntN(20)))
			}
		}
		check(b.String())
	}
}

// TestAppendETagMatchesAppendString: Storage's ETag form, and whatever else an ETag holds,
// is written as appendString writes it.
func TestAppendETagMatchesAppendString(t *testing.T) {
	etags := []string{"", `W/"datetime'2026-01-02T03%3A04%3A05.0000000Z'"`, `W/"datetime''"`, `W/"datetime'`, `W/"datetime'"`,
		`W/"datetime'a"b'"`, `W/"datetime'é'"`, `W/"datetime'x\y'"`, `"plain"`, `W/"other"`, `W/"datetime'x'"tail`}
	for _, e := range etags {
		if got, want := string(appendETag(nil, e)), string(appendString(nil, e)); got != want {
			t.Fatalf("appendETag(%q) = %s, want %s", e, got, want)
		}
	}
}
