package wire

import (
	"reflect"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/spec"
)

// authorizationForms are Authorization values of the form clients send and around it.
var authorizationForms = []string{
	"SharedKey acct:c2ln", "SharedKeyLite acct:c2ln", "SharedKeyLite devstoreaccount1:AbC+/0==",
	"SharedKey a b:c", "SharedKey a:b:c", "SharedKey :c", "SharedKey a:", "SharedKey a", "SharedKey ",
	"SharedKeyLite ", "SharedKey", "SharedKeyLite", "SharedKey  a:c", "SharedKey a:c ", " SharedKey a:c",
	"SharedKey\ta:c", "SharedKey a:c\t", "SharedKey \u00a0a:c", "SharedKey a:c\u00a0", "SharedKey a:c\u0085",
	"SharedKeyLite a:c\n", "sharedkey a:c", "SharedKeyLit a:c", "SharedKeyLite  a:c", "SharedKeyX a:c",
	"SharedKey ä:c", "SharedKey a:ä", "SharedKey ::", "SharedKey a::", "Bearer x", "", ":", " ",
}

// parseSentAuthorization reads what it takes as parseAnyAuthorization does, and takes the
// form clients send.
func TestParseSentAuthorizationIsParseAnyAuthorization(t *testing.T) {
	taken := 0
	for _, v := range authorizationForms {
		got, ok := parseSentAuthorization(v)
		want, err := parseAnyAuthorization(v)
		if ok {
			taken++
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%q: parseSentAuthorization %+v, parseAnyAuthorization %+v, %v", v, got, want, err)
			}
		}
		if pa, perr := ParseAuthorization(v); !reflect.DeepEqual(pa, want) || (perr == nil) != (err == nil) {
			t.Errorf("%q: ParseAuthorization %+v, %v; want %+v, %v", v, pa, perr, want, err)
		}
	}
	for _, v := range []string{"SharedKey acct:c2ln", "SharedKeyLite acct:c2ln", "SharedKey a b:c", "SharedKey a:b:c"} {
		if _, ok := parseSentAuthorization(v); !ok {
			t.Errorf("parseSentAuthorization(%q) does not take the form clients send", v)
		}
	}
	if taken < 4 {
		t.Errorf("parseSentAuthorization took %d values", taken)
	}
}

// withinClockSkew is the test of now.Sub(t) against spec.MaxClockSkew, at its edges and far.
func TestWithinClockSkewIsSub(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var offsets []time.Duration
	for _, d := range []time.Duration{0, time.Nanosecond, time.Second, spec.MaxClockSkew, 25 * time.Hour, 1 << 62} {
		for _, e := range []time.Duration{-time.Second, -time.Nanosecond, 0, time.Nanosecond, time.Second} {
			offsets = append(offsets, d+e, -d+e)
		}
	}
	for _, off := range offsets {
		for _, nowNS := range []int{0, 1, 999_999_999, 500_000_000} {
			now := t0.Add(off).Add(time.Duration(nowNS) - time.Duration(t0.Add(off).Nanosecond()))
			now = time.Now().Add(time.Until(now)) // a reading with a monotonic clock, as a server's
			d := now.Sub(t0)
			want := d <= spec.MaxClockSkew && d >= -spec.MaxClockSkew
			if got := withinClockSkew(now, t0); got != want {
				t.Errorf("withinClockSkew(%v, %v) = %v; Sub %v", now, t0, got, d)
			}
		}
	}
	// Dates whose distance in nanoseconds wraps around int64 to within the window:
	// 2^64 ns is 18446744073.709551616 s.
	for _, seconds := range []int64{18446744073, -18446744073, 18446744074, -18446744074} {
		now := time.Unix(t0.Unix()+seconds, 0)
		if withinClockSkew(now, t0) {
			t.Errorf("withinClockSkew(%v, %v): true %d s apart", now, t0, seconds)
		}
	}
	if !withinClockSkew(t0.Add(spec.MaxClockSkew), t0) || withinClockSkew(t0.Add(spec.MaxClockSkew+1), t0) ||
		!withinClockSkew(t0.Add(-spec.MaxClockSkew), t0) || withinClockSkew(t0.Add(-spec.MaxClockSkew-1), t0) {
		t.Error("withinClockSkew misses an edge of the window")
	}
}
