package wire

import (
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// appendDateTime renders each time as api.FormatDateTime does whichever second it kept,
// from a fresh start (the Unix epoch first, whose second is 0) and from many goroutines.
func TestKeptSecondRendersEverySecond(t *testing.T) {
	times := []time.Time{
		time.Unix(0, 0), time.Unix(0, 100), time.Unix(1, 0), time.Unix(0, 0),
		time.Date(2026, 1, 2, 3, 4, 5, 2000, time.UTC), time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
	}
	check := func(tm time.Time) {
		want := `"` + api.FormatDateTime(tm) + `"`
		if got := string(appendDateTime(nil, tm)); got != want {
			t.Errorf("appendDateTime(%v) = %q, want %q", tm, got, want)
		}
	}
	lastSecond.Store(nil)
	for _, tm := range times {
		check(tm)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				check(times[(g+i)%len(times)])
			}
		}()
	}
	wg.Wait()
}
