package reference

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

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
		ticks = append(ticks, api.Ticks(e), api.Ticks(e)+1, api.Ticks(e)-1)
	}
	for range 100_000 {
		ticks = append(ticks, r.Int64N(maxFastETagTick+1))
	}
	var last atomic.Pointer[etagSecond]
	for i, k := range ticks {
		want := string(appendETagSlow(nil, k))
		if got := formatETag(k); got != want {
			t.Fatalf("formatETag(%d) = %s, want %s", k, got, want)
		}
		// The same second as the ETag before, the next, and another.
		if i > 0 && ticks[i-1] >= 0 && ticks[i-1] <= maxFastETagTick && i%3 == 0 {
			k = ticks[i-1] + int64(i%2)*ticksPerSecond/2
			want = string(appendETagSlow(nil, k))
		}
		if got := string(appendETagOf(nil, k, &last)); got != want {
			t.Fatalf("appendETagOf(%d) = %s, want %s", k, got, want)
		}
		if len(want) != etagLength {
			t.Fatalf("formatETag(%d) = %s, not %d bytes", k, want, etagLength)
		}
	}
}
