package api

import (
	"testing"
	"time"
)

func TestParseDateTimeForms(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	for in, want := range map[string]time.Time{
		"2020-02-29":                   utc(2020, 2, 29, 0, 0, 0, 0),
		"2020-01-02T03:04Z":            utc(2020, 1, 2, 3, 4, 0, 0),
		"2020-01-02T03:04:05Z":         utc(2020, 1, 2, 3, 4, 5, 0),
		"2020-01-02T03:04:05.1234567Z": utc(2020, 1, 2, 3, 4, 5, 123456700),
		"2020-01-02T03:04:05.5+01:30":  utc(2020, 1, 2, 1, 34, 5, 500000000),
		"2020-01-01T00:00-23:59":       utc(2020, 1, 1, 23, 59, 0, 0),
		"0000-01-01":                   utc(0, 1, 1, 0, 0, 0, 0), // out of range, but a form: the caller decides
	} {
		got, ok := ParseDateTime(in)
		if !ok || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseDateTime(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", "2020", "2020-1-01", "2019-02-29", "2020-13-01", "2020-00-10", "2020-01-32",
		"2020-01-02T03:04", "2020-01-02 03:04Z", "2020-01-02T24:00Z", "2020-01-02T03:60Z",
		"2020-01-02T03:04:60Z", "2020-01-02T03:04:05.Z", "2020-01-02T03:04:05.12345678Z",
		"2020-01-02T03:04+24:00", "2020-01-02T03:04+01:60", "2020-01-02T03:04+0100", "2020-01-02Z",
		"2020-01-02T03:04Zx",
	} {
		if got, ok := ParseDateTime(in); ok {
			t.Errorf("ParseDateTime(%q) = %v, accepted", in, got)
		}
	}
}

func TestCanonicalGuid(t *testing.T) {
	for in, want := range map[string]string{
		"0f8fad5b-d9cb-469f-a165-70867728950e": "0f8fad5b-d9cb-469f-a165-70867728950e",
		"0F8FAD5B-D9CB-469F-A165-70867728950E": "0f8fad5b-d9cb-469f-a165-70867728950e",
	} {
		if got, ok := CanonicalGuid(in); !ok || got != want {
			t.Errorf("CanonicalGuid(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", "0f8fad5bd9cb469fa16570867728950e", "{0f8fad5b-d9cb-469f-a165-70867728950e}",
		"0f8fad5b-d9cb-469f-a165-70867728950g", "0f8fad5b_d9cb-469f-a165-70867728950e",
	} {
		if got, ok := CanonicalGuid(in); ok {
			t.Errorf("CanonicalGuid(%q) = %q, accepted", in, got)
		}
	}
}
