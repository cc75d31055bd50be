package wire

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
)

// AppendValue appends v's JSON form: Int64 as a decimal string, Double as a number with a
// decimal point or "NaN"/"Infinity"/"-Infinity", DateTime in Storage's trimmed 7-digit form,
// Binary as base64 (EVIDENCE.md 1.5).
func AppendValue(b []byte, v api.Value) []byte {
	if v.Null {
		return append(b, "null"...)
	}
	switch v.Type {
	case api.EdmBinary:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.Bin())
		return append(b, '"')
	case api.EdmBoolean:
		return strconv.AppendBool(b, v.Bool)
	case api.EdmDateTime:
		return appendDateTime(b, v.Time())
	case api.EdmDouble:
		switch {
		case math.IsNaN(v.Float()):
			return append(b, `"NaN"`...)
		case math.IsInf(v.Float(), 1):
			return append(b, `"Infinity"`...)
		case math.IsInf(v.Float(), -1):
			return append(b, `"-Infinity"`...)
		}
		return appendDouble(b, v.Float())
	case api.EdmInt32:
		return strconv.AppendInt(b, v.Int(), 10)
	case api.EdmInt64:
		b = append(b, '"')
		b = strconv.AppendInt(b, v.Int(), 10)
		return append(b, '"')
	}
	return appendString(b, v.Str)
}

// FormatDouble renders a finite double as a JSON number that reads back as a Double without
// an annotation wherever possible: shortest round-trip digits, with ".0" added to whole
// numbers ("5.0", as Storage answers; EVIDENCE.md 1.5), and exponent form outside [1e-6, 1e21).
func FormatDouble(f float64) string { return string(appendDouble(nil, f)) }

func appendDouble(b []byte, f float64) []byte {
	a := math.Abs(f)
	if a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.AppendFloat(b, f, 'E', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	if bytes.IndexByte(b[start:], '.') < 0 {
		b = append(b, ".0"...)
	}
	return b
}

// dateTimeLayout is api.FormatDateTime's form: UTC, up to seven fractional digits, trailing
// zeros trimmed.
const dateTimeLayout = "2006-01-02T15:04:05.9999999Z"

// appendDateTime appends api.FormatDateTime(t) as a JSON string; the form needs no escape.
// Years 0 to 9999 are written directly, the date reckoned from the Unix time (the layout's
// rendering, several times faster); others through the layout.
func appendDateTime(b []byte, t time.Time) []byte {
	const (
		secondsPerDay = 86400
		unixOfYear0   = -62167219200 // 0000-01-01T00:00:00Z
		unixOfYear1e4 = 253402300800 // 10000-01-01T00:00:00Z
	)
	sec := t.Unix()
	if sec < unixOfYear0 || sec >= unixOfYear1e4 {
		b = append(b, '"')
		b = t.UTC().AppendFormat(b, dateTimeLayout)
		return append(b, '"')
	}
	var text [len(`"2006-01-02T15:04:05.9999999Z"`)]byte
	if kept := lastSecond.Load(); kept != nil && kept.sec == sec {
		copy(text[:], kept.text[:])
	} else {
		sinceYear0 := uint64(sec - unixOfYear0) // unsigned, so that the divisions are cheaper
		days, daySec := sinceYear0/secondsPerDay, uint(sinceYear0%secondsPerDay)
		year, month, day := civilDate(uint(days))
		text[0] = '"'
		putTwoDigits(text[1:], year/100)
		putTwoDigits(text[3:], year%100)
		text[5] = '-'
		putTwoDigits(text[6:], month)
		text[8] = '-'
		putTwoDigits(text[9:], day)
		text[11] = 'T'
		putTwoDigits(text[12:], daySec/3600)
		text[14] = ':'
		putTwoDigits(text[15:], daySec/60%60)
		text[17] = ':'
		putTwoDigits(text[18:], daySec%60)
		lastSecond.Store(&dateSecond{sec: sec, text: [20]byte(text[:20])})
	}
	n := 20
	if ticks := uint(t.Nanosecond()) / 100; ticks != 0 { // seven digits, cut, trailing zeros trimmed
		text[20] = '.'
		putTwoDigits(text[21:], ticks/100000)
		putTwoDigits(text[23:], ticks/1000%100)
		putTwoDigits(text[25:], ticks/10%100)
		text[27] = byte('0' + ticks%10)
		n = 28
		for text[n-1] == '0' {
			n--
		}
	}
	text[n] = 'Z'
	text[n+1] = '"'
	return append(b, text[:n+2]...)
}

// lastSecond keeps the text of the second appendDateTime rendered last, so that the
// Timestamps of one second's writes share it. An entry, once stored, is never changed.
var lastSecond atomic.Pointer[dateSecond]

// dateSecond is the text of one second, `"2006-01-02T15:04:05`.
type dateSecond struct {
	sec  int64 // the Unix second
	text [20]byte
}

// civilDate returns the proleptic Gregorian date (Go's, and the layout's) of the day days
// after 0000-01-01, for days from 0 to the end of year 9999: Howard Hinnant's
// civil_from_days, its years counted from March so that leap days end them, and its days
// from 400 years earlier so that they are never negative.
func civilDate(days uint) (year, month, day uint) {
	const daysPer400Years = 146097
	z := days + daysPer400Years - 60 // days after -0400-03-01; 0000 is a leap year
	era := z / daysPer400Years
	z -= era * daysPer400Years // the day of its 400 years
	yearOfEra := (z - z/1460 + z/36524 - z/(daysPer400Years-1)) / 365
	dayOfYear := z - (365*yearOfEra + yearOfEra/4 - yearOfEra/100)
	mp := (5*dayOfYear + 2) / 153 // months since March
	day = dayOfYear - (153*mp+2)/5 + 1
	month = mp + 3
	if month > 12 {
		month -= 12
	}
	year = yearOfEra + era*400 - 400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// twoDigits holds the decimal forms of 00 to 99, indexed by a byte so that reading it
// needs no bounds check.
var twoDigits = func() (t [256][2]byte) {
	for n := range 100 {
		t[n] = [2]byte{byte('0' + n/10), byte('0' + n%10)}
	}
	return t
}()

// putTwoDigits writes n, from 0 to 99, as two decimal digits at b[0:2].
func putTwoDigits(b []byte, n uint) {
	d := twoDigits[uint8(n)]
	b[0], b[1] = d[0], d[1]
}

// appendETag is appendString of an ETag, faster for Storage's form W/"datetime'...'"
// (EVIDENCE.md 2.4), whose two quotes are escaped as constants.
func appendETag(b []byte, etag string) []byte {
	const prefix, suffix = `W/"datetime'`, `'"`
	if mid, ok := strings.CutPrefix(etag, prefix); ok {
		if mid, ok = strings.CutSuffix(mid, suffix); ok && plainPrefix(mid) == len(mid) {
			b = append(b, `"W/\"datetime'`...)
			b = append(b, mid...)
			return append(b, `'\""`...)
		}
	}
	return appendString(b, etag)
}

func appendMember(b []byte, first *bool, name string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	b = appendString(b, name)
	return append(b, ':')
}

// The members every entity answer has, quoted with their colon: names that need no escape.
const (
	memberMetadata     = `"` + odataMetadata + `":`
	memberEtag         = `"` + odataEtag + `":`
	memberPartitionKey = `"` + PropPartitionKey + `":`
	memberRowKey       = `"` + PropRowKey + `":`
	memberTimestamp    = `"` + PropTimestamp + `":`
)

// appendKnownMember is appendMember for one of the member* names, which are written as
// they are.
func appendKnownMember(b []byte, first *bool, quoted string) []byte {
	if !*first {
		b = append(b, ',')
	}
	*first = false
	return append(b, quoted...)
}

const hexDigits = "0123456789abcdef"

// loadWord reads eight bytes as a little-endian word; indexing a string of known length
// lets the compiler read them in one load.
func loadWord(w string) uint64 {
	_ = w[7]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// plainBits has the high bit of each of the eight bytes of w set exactly when that byte is
// printable ASCII other than '"' and '\\': what a JSON string holds as it is. For a byte
// below 0x80, adding 0x80-k sets its high bit exactly when the byte is at least k, and
// carries nothing into the next byte; a byte of 0x80 or more clears its own bit through
// &^ w, and any carry out of it only clears bits of a word that fails anyway.
func plainBits(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	atLeastSpace := w + (0x80-0x20)*ones
	notQuote := (w ^ '"'*ones) + 0x7f*ones
	notBackslash := (w ^ '\\'*ones) + 0x7f*ones
	return atLeastSpace & notQuote & notBackslash &^ w & highs
}

// plainHighs is plainBits of a word that is plain throughout.
const plainHighs = 0x8080808080808080

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends s as the inside of a JSON string.
func appendEscaped(b []byte, s string) []byte {
	var i int
	if len(s) < 8 { // short (a key, a name): read here, byte by byte
		for i < len(s) && plainByte[s[i]] {
			i++
		}
	} else {
		i = plainPrefix(s)
	}
	if i == len(s) {
		return append(b, s...)
	}
	start := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			i += plainPrefix(s[i:])
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
		i += plainPrefix(s[i:])
	}
	return append(b, s[start:]...)
}

// plainByte marks the bytes a JSON string holds as they are (plainPrefix).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainPrefix returns the length of the longest prefix of s that is printable ASCII other
// than '"' and '\\': what a JSON string holds as it is, reading words of eight bytes.
func plainPrefix(s string) int {
	rest := s
	for len(rest) >= 32 && plainBits(loadWord(rest[:8]))&plainBits(loadWord(rest[8:16]))&
		plainBits(loadWord(rest[16:24]))&plainBits(loadWord(rest[24:32])) == plainHighs {
		rest = rest[32:]
	}
	if len(rest) >= 16 && plainBits(loadWord(rest[:8]))&plainBits(loadWord(rest[8:16])) == plainHighs {
		rest = rest[16:]
	}
	if len(rest) >= 8 && plainBits(loadWord(rest[:8])) == plainHighs {
		rest = rest[8:]
	}
	if len(rest) > 0 && len(rest) < 8 && len(s) >= 8 && plainBits(loadWord(s[len(s)-8:])) == plainHighs {
		return len(s) // the last eight bytes, overlapping those read before, are plain too
	}
	for len(rest) > 0 {
		if c := rest[0]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
		rest = rest[1:]
	}
	return len(s) - len(rest)
}
