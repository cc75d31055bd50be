package api

import "time"

// ParseDateTime reads an Edm.DateTime written in one of the forms the service accepts
// (DTF; EVIDENCE.md 1.5): YYYY-MM-DD (midnight UTC), YYYY-MM-DDThh:mm<TZ>, YYYY-MM-DDThh:mm:ss<TZ>
// and YYYY-MM-DDThh:mm:ss.f{1,7}<TZ>, where TZ is Z or ±hh:mm with a magnitude of at most
// 23:59 and is required once a time is given. It returns the instant in UTC, or false when s
// is in none of these forms or names no calendar date. It does not check the range of
// Edm.DateTime (spec.MinDateTime to spec.MaxDateTime): each caller answers a value outside
// it in its own way.
func ParseDateTime(s string) (time.Time, bool) {
	num := func(from, n int) (int, bool) {
		if from+n > len(s) {
			return 0, false
		}
		v := 0
		for i := from; i < from+n; i++ {
			if !isDigit(s[i]) {
				return 0, false
			}
			v = v*10 + int(s[i]-'0')
		}
		return v, true
	}
	year, okY := num(0, 4)
	month, okM := num(5, 2)
	day, okD := num(8, 2)
	if !okY || !okM || !okD || s[4] != '-' || s[7] != '-' || !validDate(year, month, day) {
		return time.Time{}, false
	}
	if len(s) == 10 {
		return time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC), true
	}
	hour, okH := num(11, 2)
	minute, okMin := num(14, 2)
	if s[10] != 'T' || !okH || !okMin || s[13] != ':' || hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	i, sec, nanos := 16, 0, 0
	if i < len(s) && s[i] == ':' {
		var ok bool
		if sec, ok = num(17, 2); !ok || sec > 59 {
			return time.Time{}, false
		}
		i = 19
		if i < len(s) && s[i] == '.' {
			i++
			digits := 0
			for i < len(s) && isDigit(s[i]) && digits < 7 {
				nanos = nanos*10 + int(s[i]-'0')
				digits++
				i++
			}
			if digits == 0 {
				return time.Time{}, false
			}
			for ; digits < 9; digits++ {
				nanos *= 10
			}
		}
	}
	offset, ok := parseZone(s[i:])
	if !ok {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nanos, time.FixedZone("", offset)).UTC(), true
}

// parseZone reads Z or ±hh:mm (magnitude at most 23:59) and returns the offset in seconds.
func parseZone(s string) (int, bool) {
	if s == "Z" {
		return 0, true
	}
	if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
		return 0, false
	}
	for _, i := range []int{1, 2, 4, 5} {
		if !isDigit(s[i]) {
			return 0, false
		}
	}
	h := int(s[1]-'0')*10 + int(s[2]-'0')
	m := int(s[4]-'0')*10 + int(s[5]-'0')
	if h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// validDate reports whether year-month-day is a date of the proleptic Gregorian calendar.
func validDate(year, month, day int) bool {
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month-1]
	if month == 2 && (year%4 == 0 && (year%100 != 0 || year%400 == 0)) {
		days = 29
	}
	return day <= days
}

// CanonicalGuid returns s, a GUID in the 8-4-4-4-12 hexadecimal form in any case, in the
// lower-case form that Guid values hold (EVIDENCE.md 1.5), or false when s is not in that form.
func CanonicalGuid(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
			continue
		}
		switch {
		case isDigit(c), c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			b[i] = c + ('a' - 'A')
		default:
			return "", false
		}
	}
	return string(b), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
