package wire

import (
	"math/rand/v2"
	"testing"
	"time"
)

// appendDateTime writes what the layout writes, for every year the layout pads to four
// digits and beyond, in any zone, with every number of fractional digits.
func TestAppendDateTimeMatchesLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	zone := time.FixedZone("x", -7*3600-30*60)
	times := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 6, 1, 0, 0, 0, 1, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 100, zone), time.Date(2026, 1, 2, 3, 4, 5, 99, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 1000000, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC),
	}
	for i := 0; i < 100000; i++ {
		sec := r.Int64N(400000000000) - 62135596800 - 100000000000 // years about -2000 to 12000
		times = append(times, time.Unix(sec, r.Int64N(1e9)).In(zone))
	}
	for _, tm := range times {
		want := `"` + tm.UTC().Format(dateTimeLayout) + `"`
		if got := string(appendDateTime(nil, tm)); got != want {
			t.Fatalf("appendDateTime(%v) = %s, want %s", tm, got, want)
		}
	}
}
