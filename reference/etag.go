package reference

import (
	"sync/atomic"

	"github.com/tableconform/conform/reference/api"
)

// Every stored version of an entity gets a Timestamp, the next tick of the Service's clock
// (Service.nextTick), and an ETag made from it; the store keeps both as it is given them.

// formatETag returns the ETag of an entity whose Timestamp is k ticks, in the form both
// Storage and Cosmos send: W/"datetime'2021-09-20T21%3A55%3A33.1005177Z'" (EVIDENCE.md 2.4),
// seven fractional digits and ':' percent-encoded. Every ETag has etagLength bytes.
func formatETag(k int64) string {
	var b [etagLength]byte
	return string(appendETag(b[:0], k))
}

// etagLength is the length of every ETag formatETag returns.
const etagLength = len(`W/"datetime'0000-00-00T00%3A00%3A00.0000000Z'"`)

// Civil dates from ticks, without time.Time: days since 0001-01-01 to a proleptic Gregorian
// date (H. Hinnant's days_from_civil inverse, shifted to that epoch).
const (
	ticksPerSecond  = api.TicksPerSecond
	ticksPerDay     = 24 * 60 * 60 * ticksPerSecond
	maxFastETagTick = 3_155_378_975_999_999_999 // 9999-12-31T23:59:59.9999999Z
)

// appendETag appends formatETag(k) to dst.
func appendETag(dst []byte, k int64) []byte {
	if k < 0 || k > maxFastETagTick {
		return appendETagSlow(dst, k)
	}
	days, rem := k/ticksPerDay, k%ticksPerDay
	year, month, day := civil(days)
	secs, frac := rem/ticksPerSecond, rem%ticksPerSecond
	dst = append(dst, `W/"datetime'`...)
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = append2(dst, month)
	dst = append(dst, '-')
	dst = append2(dst, day)
	dst = append(dst, 'T')
	dst = append2(dst, int(secs/3600))
	dst = append(dst, "%3A"...)
	dst = append2(dst, int(secs/60%60))
	dst = append(dst, "%3A"...)
	dst = append2(dst, int(secs%60))
	dst = append(dst, '.')
	dst = appendDigits(dst, int(frac), 7)
	return append(dst, `Z'"`...)
}

// etagSecond is the text the ETags of one second's Timestamps share: all but the fraction
// of the second and what follows it.
type etagSecond struct {
	second int64 // the Timestamp's ticks / ticksPerSecond
	prefix [etagPrefixLength]byte
}

const etagPrefixLength = etagLength - len(`0000000Z'"`)

// appendETagOf is appendETag, the text of the second it formatted last kept in last, so that
// the ETags of one second's writes share it.
func appendETagOf(dst []byte, k int64, last *atomic.Pointer[etagSecond]) []byte {
	if k < 0 || k > maxFastETagTick {
		return appendETagSlow(dst, k)
	}
	second, frac := k/ticksPerSecond, k%ticksPerSecond
	p := last.Load()
	if p == nil || p.second != second {
		var full [etagLength]byte
		p = &etagSecond{second: second}
		copy(p.prefix[:], appendETag(full[:0], second*ticksPerSecond))
		last.Store(p)
	}
	dst = append(dst, p.prefix[:]...)
	var tail [len(`0000000Z'"`)]byte
	f := int(frac)
	hi, lo := f/1_000_000, f%1_000_000
	tail[0] = byte('0' + hi)
	for i, pair := range [3]int{lo / 10000, lo / 100 % 100, lo % 100} {
		tail[1+2*i], tail[2+2*i] = digitPairs[2*pair], digitPairs[2*pair+1]
	}
	tail[7], tail[8], tail[9] = 'Z', '\'', '"'
	return append(dst, tail[:]...)
}

// civil returns the date that lies days after 0001-01-01.
func civil(days int64) (year, month, day int) {
	z := days + 306 // days since 0000-03-01, the start of a 400-year era in March
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = int(yoe + era*400)
	if month <= 2 {
		year++
	}
	return year, month, day
}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

func append2(b []byte, v int) []byte { return append(b, digitPairs[2*v], digitPairs[2*v+1]) }

// appendETagSlow formats Timestamps outside 0001..9999 through time.Time.
func appendETagSlow(buf []byte, k int64) []byte {
	t := api.TimeOfTicks(k)
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	frac := int(k % ticksPerSecond)
	if frac < 0 {
		frac += ticksPerSecond
	}
	buf = append(buf, `W/"datetime'`...)
	buf = appendDigits(buf, year, 4)
	buf = append(buf, '-')
	buf = appendDigits(buf, int(month), 2)
	buf = append(buf, '-')
	buf = appendDigits(buf, day, 2)
	buf = append(buf, 'T')
	buf = appendDigits(buf, hour, 2)
	buf = append(buf, "%3A"...)
	buf = appendDigits(buf, minute, 2)
	buf = append(buf, "%3A"...)
	buf = appendDigits(buf, second, 2)
	buf = append(buf, '.')
	buf = appendDigits(buf, frac, 7)
	buf = append(buf, `Z'"`...)
	return buf
}

func appendDigits(b []byte, v, width int) []byte {
	var d [10]byte
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[:width]...)
}
