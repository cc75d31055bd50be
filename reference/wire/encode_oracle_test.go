package wire

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

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
