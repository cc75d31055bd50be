package reference

import (
	"encoding/binary"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// The encoding of an entity, as it lies in a table's arena (store.go): the PartitionKey's
// bytes, the RowKey's bytes, then the body:
//
//	8 bytes   Timestamp, in 100 ns ticks since 0001-01-01T00:00:00Z, little endian
//	4 bytes   the entity's id in its table (store.go), little endian
//	2 bytes   the number of properties, little endian
//	46 bytes  the ETag (formatETag of the Timestamp), kept so that reads share it
//	for each property:
//	  uvarint  the property name's id in the Service's name table
//	  1 byte   the EDM type (typeString...)
//	  payload  String, Binary: uvarint length, then the bytes; Boolean: 1 byte;
//	           DateTime: 8 bytes of ticks; Double: 8 bytes of IEEE bits; Guid: 16 bytes;
//	           Int32, Int64: zig-zag varint

// bodyHeader is the length of a body before its properties; bodyETag is where its ETag
// lies.
const (
	bodyETag   = 14
	bodyHeader = bodyETag + etagLength
)

// The type byte of each EDM type in a record body.
const (
	typeString byte = 1 + iota
	typeBinary
	typeBoolean
	typeDateTime
	typeDouble
	typeGuid
	typeInt32
	typeInt64
)

// typeCode returns t's type byte, or 0 for a type that is not one of the eight.
func typeCode(t api.EdmType) byte {
	switch t {
	case api.EdmString:
		return typeString
	case api.EdmInt32:
		return typeInt32
	case api.EdmDouble:
		return typeDouble
	case api.EdmDateTime:
		return typeDateTime
	case api.EdmInt64:
		return typeInt64
	case api.EdmBoolean:
		return typeBoolean
	case api.EdmGuid:
		return typeGuid
	case api.EdmBinary:
		return typeBinary
	}
	return 0
}

// Ticks are api's: 100 ns from 0001-01-01T00:00:00Z (EVIDENCE.md 1.2, 1.5).
const (
	ticksPerSecond = api.TicksPerSecond
	unixEpochTicks = api.UnixEpochTicks
)

func ticksOf(t time.Time) int64     { return api.Ticks(t) }
func timeOfTicks(k int64) time.Time { return api.TimeOfTicks(k) }

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
	t := timeOfTicks(k)
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

// nameTable interns property names: a record stores a small id instead of the name, and a
// decoded entity shares the one interned copy. Reads are lock-free; a name seen for the
// first time takes a mutex. Ids are never reused, so a record stays decodable for ever.
type nameTable struct {
	read  atomic.Pointer[map[string]uint32] // immutable snapshot of ids
	names atomic.Pointer[[]string]          // names by id; elements are never rewritten

	mu     sync.Mutex
	all    map[string]uint32 // every id; guarded by mu
	list   []string          // guarded by mu
	misses int               // look-ups that missed read since it was published; guarded by mu
}

func newNameTable() *nameTable {
	t := &nameTable{all: map[string]uint32{}}
	t.read.Store(&map[string]uint32{})
	t.names.Store(&[]string{})
	return t
}

// id returns name's id, interning the name on first sight.
func (t *nameTable) id(name string) uint32 {
	if id, ok := (*t.read.Load())[name]; ok {
		return id
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.all[name]
	if !ok {
		name = strings.Clone(name)
		id = uint32(len(t.list))
		t.list = append(t.list, name)
		t.all[name] = id
		list := t.list
		t.names.Store(&list)
	}
	// Publish a fresh snapshot once the misses have paid for copying it (amortised O(1)).
	if t.misses++; t.misses >= len(t.all) {
		snapshot := make(map[string]uint32, len(t.all))
		for k, v := range t.all {
			snapshot[k] = v
		}
		t.read.Store(&snapshot)
		t.misses = 0
	}
	return id
}

// storedProperty reports whether a property sent with an entity is kept: null values are
// not stored (EVIDENCE.md 1.3) and a client-sent Timestamp is ignored (DM).
func storedProperty(name string, v api.Value) bool {
	return !v.Null && name != timestampName
}

const (
	partitionKeyName = "PartitionKey"
	rowKeyName       = "RowKey"
	timestampName    = "Timestamp"
)

// encodeEntity appends the encoding of an entity whose properties have been validated to
// scratch[:0], with Timestamp, ETag and id left zero (setBodyTimestamp, setBodyID fill
// them), and
// returns it with the number of stored properties and the entity's size (EntitySize).
func (n *nameTable) encodeEntity(scratch []byte, pk, rk string, props map[string]api.Value) (buf []byte, count, size int) {
	buf = append(scratch[:0], pk...)
	buf = append(buf, rk...)
	buf = append(buf, make([]byte, bodyHeader)...)
	size = spec.SizeEntityOverhead + 2*(utf16Len(pk)+utf16Len(rk))
	for name, v := range props {
		if !storedProperty(name, v) {
			continue
		}
		count++
		size += spec.SizePropertyOverhead + 2*utf16Len(name) + api.ValueSize(v)
		buf = binary.AppendUvarint(buf, uint64(n.id(name)))
		buf = appendValue(buf, v)
	}
	setBodyCount(buf[len(pk)+len(rk):], count)
	return buf, count, size
}

// encodeMerge is encodeEntity of the entity that merging props into the entity with the
// encoded body old stores: the stored properties of props, and every property of old that
// props does not set. Its stored properties are copied as they are.
func (n *nameTable) encodeMerge(scratch []byte, pk, rk string, props map[string]api.Value, old string) (buf []byte, count, size int) {
	buf, count, size = n.encodeEntity(scratch, pk, rk, props)
	names := *n.names.Load()
	oldCount := int(old[12]) | int(old[13])<<8
	i := bodyHeader
	for range oldCount {
		start := i
		id, j := uvarintAt(old, i)
		end, vsize := skipValue(old, j)
		i = end
		name := names[id]
		if v, ok := props[name]; ok && storedProperty(name, v) {
			continue
		}
		count++
		size += spec.SizePropertyOverhead + 2*utf16Len(name) + vsize
		buf = append(buf, old[start:end]...)
	}
	setBodyCount(buf[len(pk)+len(rk):], count)
	return buf, count, size
}

// skipValue returns the end of the encoded value (type byte and payload) at i and its
// size by the documented accounting (valueSize).
func skipValue(b string, i int) (end, size int) {
	code := b[i]
	i++
	switch code {
	case typeString:
		l, j := uvarintAt(b, i)
		end = j + int(l)
		return end, spec.SizeStringOverhead + 2*utf16Len(b[j:end])
	case typeBinary:
		l, j := uvarintAt(b, i)
		return j + int(l), spec.SizeBinaryOverhead + int(l)
	case typeBoolean:
		return i + 1, spec.SizeBoolean
	case typeDateTime:
		return i + 8, spec.SizeDateTime
	case typeDouble:
		return i + 8, spec.SizeDouble
	case typeGuid:
		return i + 16, spec.SizeGuid
	case typeInt32:
		_, j := uvarintAt(b, i)
		return j, spec.SizeInt32
	case typeInt64:
		_, j := uvarintAt(b, i)
		return j, spec.SizeInt64
	}
	return len(b), 0 // unreachable for bodies this package wrote
}

// setBodyCount writes the property count of an encoded body; a count above the limit is
// refused before the body is stored, so clamping it is harmless.
func setBodyCount(body []byte, count int) {
	binary.LittleEndian.PutUint16(body[12:], uint16(min(count, math.MaxUint16)))
}

// appendValue appends v's type byte and payload; v has been validated.
func appendValue(buf []byte, v api.Value) []byte {
	code := typeCode(v.Type)
	buf = append(buf, code)
	switch code {
	case typeString:
		buf = binary.AppendUvarint(buf, uint64(len(v.Str)))
		buf = append(buf, v.Str...)
	case typeBinary:
		buf = binary.AppendUvarint(buf, uint64(len(v.Str)))
		buf = append(buf, v.Str...)
	case typeBoolean:
		b := byte(0)
		if v.Bool {
			b = 1
		}
		buf = append(buf, b)
	case typeDateTime:
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v.DateTimeTicks()))
	case typeDouble:
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.Float()))
	case typeGuid:
		g, _ := parseGuid(v.Str)
		buf = append(buf, g[:]...)
	case typeInt32, typeInt64:
		buf = binary.AppendVarint(buf, v.Int())
	}
	return buf
}

// bodyTicks returns the Timestamp ticks of an encoded body.
func bodyTicks(body string) int64 { return int64(le64(body, 0)) }

// bodyETagOf returns the ETag of an encoded body, shared with the body.
func bodyETagOf(body string) string { return body[bodyETag:bodyHeader] }

// setBodyTimestamp writes the Timestamp ticks of an encoded body and its ETag.
func setBodyTimestamp(body []byte, ticks int64) {
	binary.LittleEndian.PutUint64(body, uint64(ticks))
	appendETag(body[bodyETag:bodyETag], ticks)
}

// decode returns the entity with keys pk, rk and encoded body, with its Timestamp and
// ETag. The entity is the caller's: strings are shared (immutable), byte slices are fresh.
func (n *nameTable) decode(pk, rk, body string) api.Entity {
	ticks := bodyTicks(body)
	return api.Entity{
		PartitionKey: pk,
		RowKey:       rk,
		Timestamp:    timeOfTicks(ticks),
		ETag:         bodyETagOf(body),
		Properties:   n.decodeProperties(body),
	}
}

// decodeProperties returns the properties of an encoded body, in a map of their number.
func (n *nameTable) decodeProperties(body string) map[string]api.Value {
	names := *n.names.Load()
	count := int(body[12]) | int(body[13])<<8
	props := make(map[string]api.Value, count)
	i := bodyHeader
	for range count {
		id := uint64(body[i]) // a one-byte uvarint, read inline, for every id below 128
		if id < 0x80 {
			i++
		} else {
			id, i = uvarintAt(body, i)
		}
		name := names[id]
		code := body[i]
		i++
		switch code {
		case typeString:
			l := uint64(body[i])
			if l < 0x80 {
				i++
			} else {
				l, i = uvarintAt(body, i)
			}
			end := i + int(l)
			props[name] = api.Value{Type: api.EdmString, Str: body[i:end]}
			i = end
		case typeBinary:
			l, j := uvarintAt(body, i)
			end := j + int(l)
			props[name] = api.BinaryString(body[j:end])
			i = end
		case typeBoolean:
			props[name] = api.Value{Type: api.EdmBoolean, Bool: body[i] == 1}
			i++
		case typeDateTime:
			props[name] = api.DateTimeTicks(int64(le64(body, i)))
			i += 8
		case typeDouble:
			props[name] = api.Double(math.Float64frombits(le64(body, i)))
			i += 8
		case typeGuid:
			var g [16]byte
			copy(g[:], body[i:i+16])
			props[name] = api.Value{Type: api.EdmGuid, Str: formatGuid(g)}
			i += 16
		case typeInt32, typeInt64:
			v, j := varintAt(body, i)
			if code == typeInt64 {
				props[name] = api.Int64(v)
			} else {
				props[name] = api.Int32(int32(v))
			}
			i = j
		default:
			// Unreachable for bodies this package wrote; answer what was read rather than
			// crash the process.
			return props
		}
	}
	return props
}

func le64(s string, i int) uint64 {
	_ = s[i+7]
	return load64(s, i)
}

// uvarintAt decodes the uvarint at s[i:] and returns it with the index after it.
func uvarintAt(s string, i int) (uint64, int) {
	var x uint64
	var shift uint
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x80 {
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return x, i
}

func varintAt(s string, i int) (int64, int) {
	ux, j := uvarintAt(s, i)
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, j
}

// parseGuid parses the 8-4-4-4-12 hexadecimal form of a GUID, in either case.
func parseGuid(s string) ([16]byte, bool) {
	var g [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return g, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
			continue
		}
		hi, ok1 := hexDigit(s[i])
		lo, ok2 := hexDigit(s[i+1])
		if !ok1 || !ok2 {
			return g, false
		}
		g[j] = hi<<4 | lo
		j++
		i += 2
	}
	return g, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// formatGuid renders g in its canonical lower-case 8-4-4-4-12 form.
func formatGuid(g [16]byte) string {
	const hexChars = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range g {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hexChars[c>>4], hexChars[c&0xf]
		j += 2
	}
	return string(b[:])
}
