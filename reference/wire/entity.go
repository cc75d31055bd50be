package wire

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
)

// Names of the JSON members the protocol reserves.
const (
	PropPartitionKey = "PartitionKey"
	PropRowKey       = "RowKey"
	PropTimestamp    = "Timestamp"
	PropTableName    = "TableName"

	odataMetadata = "odata.metadata"
	odataEtag     = "odata.etag"
	odataType     = "odata.type"
	odataID       = "odata.id"
	odataEditLink = "odata.editLink"
	typeSuffix    = "@odata.type"
)

// Document says where an answer belongs, for the odata.* members of metadata answers:
// `odata.metadata` is ServiceURL + "$metadata#" + the fragment (EVIDENCE.md 6).
type Document struct {
	// Level is the metadata level of the answer.
	Level Metadata
	// ServiceURL is the table endpoint as clients address it, e.g.
	// "https://acct.table.core.windows.net/" or "http://127.0.0.1:10002/devstoreaccount1/".
	ServiceURL string
	// Account names the account, for `odata.type` ("acct.tbl") in full metadata.
	Account string
	// Table is the table of an entity answer.
	Table string
	// Select is the $select of the request, if any; it shows in `odata.metadata`.
	Select []string
}

func (d Document) base() string {
	if strings.HasSuffix(d.ServiceURL, "/") {
		return d.ServiceURL
	}
	return d.ServiceURL + "/"
}

// MetadataURL returns the `odata.metadata` value for fragment, e.g. "tbl/@Element".
func (d Document) MetadataURL(fragment string) string { return d.base() + "$metadata#" + fragment }

// EncodeEntity renders one entity as the answer of Get Entity or Insert Entity: the entity
// object with `odata.metadata` ending in "#tbl/@Element" (for a projection
// "#tbl&$select=a,b/@Element", the OData v3 form; UNCERTAIN for Storage).
func EncodeEntity(e api.Entity, d Document) ([]byte, error) {
	return AppendEntity(make([]byte, 0, 256), e, d)
}

// AppendEntity appends EncodeEntity's rendering of e to b, so that a server can render into
// a buffer it reuses. On error b's contents past its original length are undefined.
func AppendEntity(b []byte, e api.Entity, d Document) ([]byte, error) {
	var room [16]api.Property
	le := listed(e, room[:0])
	return AppendListedEntity(b, &le, d)
}

// AppendListedEntity is AppendEntity of the entity e lists: the same bytes.
func AppendListedEntity(b []byte, e *api.ListedEntity, d Document) ([]byte, error) {
	b = append(b, '{')
	first := true
	if d.Level != NoMetadata {
		b = appendKnownMember(b, &first, memberMetadata)
		b = d.appendMetadataURL(b, "/@Element")
	}
	b, err := appendEntityMembers(b, &first, e, &d)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// listed returns e with its properties listed in room's array (or a larger one), in name
// order.
func listed(e api.Entity, room []api.Property) api.ListedEntity {
	ps := room
	for n, v := range e.Properties {
		ps = append(ps, api.Property{Name: n, Value: v})
	}
	api.SortProperties(ps)
	return api.ListedEntity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Timestamp: e.Timestamp, ETag: e.ETag, Properties: ps, Absent: e.Absent}
}

// appendMetadataURL appends the quoted `odata.metadata` of an entity answer: the entity set
// fragment followed by suffix, "" or "/@Element". Without $select it is copied from
// metadataURLs when the last answer of its slot had the same.
func (d Document) appendMetadataURL(b []byte, suffix string) []byte {
	if d.Select != nil {
		return d.renderMetadataURL(b, suffix)
	}
	slot := &metadataURLs[metadataURLSlot(d.Table, suffix)]
	if m := slot.Load(); m != nil && m.table == d.Table && m.suffix == suffix && m.serviceURL == d.ServiceURL {
		return append(b, m.quoted...)
	}
	start := len(b)
	b = d.renderMetadataURL(b, suffix)
	slot.Store(&renderedMetadataURL{
		serviceURL: strings.Clone(d.ServiceURL), table: strings.Clone(d.Table), suffix: suffix,
		quoted: bytes.Clone(b[start:]),
	})
	return b
}

// renderedMetadataURL is the quoted `odata.metadata` of the answers about one table of one
// service, without $select.
type renderedMetadataURL struct {
	serviceURL, table, suffix string
	quoted                    []byte
}

// metadataURLs holds the metadata URL rendered last in each slot (metadataURLSlot). An entry,
// once stored, is never rewritten.
var metadataURLs [8]atomic.Pointer[renderedMetadataURL]

func metadataURLSlot(table, suffix string) int {
	n := len(table) + len(suffix)
	if table != "" {
		n += int(table[len(table)-1])
	}
	return n % len(metadataURLs)
}

// renderMetadataURL is appendMetadataURL, rendered.
func (d Document) renderMetadataURL(b []byte, suffix string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, d.ServiceURL)
	if !strings.HasSuffix(d.ServiceURL, "/") {
		b = append(b, '/')
	}
	b = append(b, "$metadata#"...)
	b = appendEscaped(b, d.Table)
	if d.Select != nil {
		b = append(b, "&$select="...)
		for i, s := range d.Select {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendEscaped(b, s)
		}
	}
	b = append(b, suffix...) // "" or "/@Element": nothing to escape
	return append(b, '"')
}

// EncodeEntitySet renders the answer of Query Entities: {"odata.metadata":..,"value":[..]}.
func EncodeEntitySet(es []api.Entity, d Document) ([]byte, error) {
	return AppendEntitySet(make([]byte, 0, 128+len(es)*256), es, d)
}

// AppendEntitySet appends EncodeEntitySet's rendering of es to b. On error b's contents past
// its original length are undefined.
func AppendEntitySet(b []byte, es []api.Entity, d Document) ([]byte, error) {
	b = AppendEntitySetStart(b, d)
	for i, e := range es {
		var err error
		if b, err = AppendEntitySetItem(b, i, e, d); err != nil {
			return nil, err
		}
	}
	return AppendEntitySetEnd(b), nil
}

// AppendEntitySetStart, AppendEntitySetItem (once per entity, i counting from 0) and
// AppendEntitySetEnd append EncodeEntitySet's rendering in parts, so that a large answer
// can be written as it is rendered.
func AppendEntitySetStart(b []byte, d Document) []byte {
	b = append(b, '{')
	first := true
	if d.Level != NoMetadata {
		b = appendKnownMember(b, &first, memberMetadata)
		b = d.appendMetadataURL(b, "")
	}
	b = appendMember(b, &first, "value")
	return append(b, '[')
}

// AppendEntitySetItem appends the entity e, the i-th of the set (see AppendEntitySetStart).
func AppendEntitySetItem(b []byte, i int, e api.Entity, d Document) ([]byte, error) {
	var room [16]api.Property
	le := listed(e, room[:0])
	return AppendListedEntitySetItem(b, i, &le, d)
}

// AppendListedEntitySetItem is AppendEntitySetItem of the entity e lists: the same bytes.
func AppendListedEntitySetItem(b []byte, i int, e *api.ListedEntity, d Document) ([]byte, error) {
	if i > 0 {
		b = append(b, ',')
	}
	b = append(b, '{')
	f := true
	var err error
	if b, err = appendEntityMembers(b, &f, e, &d); err != nil {
		return nil, fmt.Errorf("entity %d: %w", i, err)
	}
	return append(b, '}'), nil
}

// AppendEntitySetEnd ends the set (see AppendEntitySetStart).
func AppendEntitySetEnd(b []byte) []byte { return append(b, ']', '}') }

// EncodeRequestEntity renders e as a request body (Insert, Update, Merge, upserts, batch
// parts): PartitionKey, RowKey and the custom properties, each annotated whenever its type
// cannot be inferred from the JSON. Doubles are always annotated, so that a whole number
// never turns into an Int32 (EVIDENCE.md 12 #1); redundant annotations are accepted by the
// service (EVIDENCE.md 1.5). Timestamp and ETag are not sent.
func EncodeRequestEntity(e api.Entity) ([]byte, error) {
	b := make([]byte, 0, 256)
	b = append(b, '{')
	first := true
	if e.Absent&api.AbsentPartitionKey == 0 {
		b = appendMember(b, &first, PropPartitionKey)
		b = appendString(b, e.PartitionKey)
	}
	if e.Absent&api.AbsentRowKey == 0 {
		b = appendMember(b, &first, PropRowKey)
		b = appendString(b, e.RowKey)
	}
	var room [16]api.Property
	le := listed(e, room[:0])
	var err error
	if b, err = appendProperties(b, &first, le.Properties, true, true, false); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func appendEntityMembers(b []byte, first *bool, e *api.ListedEntity, d *Document) ([]byte, error) {
	if d.Level == FullMetadata {
		path := EntityPath(d.Table, e.PartitionKey, e.RowKey)
		b = appendMember(b, first, odataType)
		b = appendString(b, d.Account+"."+d.Table)
		b = appendMember(b, first, odataID)
		b = appendString(b, d.base()+path)
	}
	if d.Level != NoMetadata && e.ETag != "" {
		// Storage sends odata.etag in minimal metadata too (EVIDENCE.md 3.6, CONFIRMED-TRAFFIC).
		b = appendKnownMember(b, first, memberEtag)
		b = appendETag(b, e.ETag)
	}
	if d.Level == FullMetadata {
		b = appendMember(b, first, odataEditLink)
		b = appendString(b, EntityPath(d.Table, e.PartitionKey, e.RowKey))
	}
	if e.Absent&api.AbsentPartitionKey == 0 {
		b = appendKnownMember(b, first, memberPartitionKey)
		b = appendString(b, e.PartitionKey)
	}
	if e.Absent&api.AbsentRowKey == 0 {
		b = appendKnownMember(b, first, memberRowKey)
		b = appendString(b, e.RowKey)
	}
	if e.Absent&api.AbsentTimestamp == 0 && !e.Timestamp.IsZero() {
		if d.Level == FullMetadata {
			b = appendMember(b, first, PropTimestamp+typeSuffix)
			b = appendString(b, api.EdmDateTime.String())
		}
		b = appendKnownMember(b, first, memberTimestamp)
		b = appendDateTime(b, e.Timestamp)
	}
	return appendProperties(b, first, e.Properties, d.Level != NoMetadata, false, e.PlainText)
}

// appendProperties appends the members of ps, which are in name order; each whose type its
// JSON form does not tell is annotated when annotate is set. With plain, the names and
// String values are plain text (api.ListedEntity.PlainText), copied as they are.
func appendProperties(b []byte, first *bool, ps []api.Property, annotate, request, plain bool) ([]byte, error) {
	for _, p := range ps {
		v := p.Value
		if !v.Null && !v.Type.Valid() {
			return nil, fmt.Errorf("property %q: unknown type %q", p.Name, v.Type)
		}
		if !*first {
			b = append(b, ',')
		}
		*first = false
		b = append(b, '"')
		nameStart := len(b)
		if plain {
			b = append(b, p.Name...)
		} else {
			b = appendEscaped(b, p.Name)
		}
		if annotate && !v.Null && needsAnnotation(v, request) {
			nameEnd := len(b)
			b = append(b, annotationInfixes[v.Type]...)
			b = append(b, b[nameStart:nameEnd]...)
		}
		b = append(b, '"', ':')
		if plain && v.Type == api.EdmString && !v.Null {
			b = append(b, '"')
			b = append(b, v.Str...)
			b = append(b, '"')
		} else {
			b = AppendValue(b, v)
		}
	}
	return b, nil
}

// annotationInfixes holds, for each EDM type, what lies between an annotated property's
// escaped name and the name again: `@odata.type":"Edm.Int64","`.
var annotationInfixes = func() (infixes [api.EdmInt64 + 1]string) {
	for _, t := range api.AllEdmTypes {
		infixes[t] = typeSuffix + `":"` + t.String() + `","`
	}
	return infixes
}()

// needsAnnotation says whether v's type cannot be told from its JSON form: Int64, DateTime,
// Guid and Binary always, a Double when it is special or its rendering looks like an integer,
// that is has neither a decimal point nor an exponent (EVIDENCE.md 1.5, PF;
// E-double-exponent). A request annotates every Double.
func needsAnnotation(v api.Value, request bool) bool {
	if v.Type == api.EdmDouble {
		return request || doubleLooksIntegral(v)
	}
	return alwaysAnnotated[v.Type]
}

// alwaysAnnotated holds the EDM types whose JSON form never tells them (needsAnnotation).
var alwaysAnnotated = [256]bool{api.EdmInt64: true, api.EdmDateTime: true, api.EdmGuid: true, api.EdmBinary: true}

// doubleLooksIntegral says whether the Double v's JSON form would read back as another
// type: a special value, or a rendering with neither a decimal point nor an exponent.
func doubleLooksIntegral(v api.Value) bool {
	f := v.Float()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return true
	}
	var room [32]byte
	return !bytes.ContainsAny(appendDouble(room[:0], f), ".eE")
}

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

// EncodeTable renders the answer of Create Table: the table object with `odata.metadata`
// ending in "#Tables/@Element", plus odata.type/id/editLink in full metadata.
func EncodeTable(name string, d Document) []byte {
	b := []byte{'{'}
	first := true
	if d.Level != NoMetadata {
		b = appendKnownMember(b, &first, memberMetadata)
		b = appendString(b, d.MetadataURL("Tables/@Element"))
	}
	b = appendTableMembers(b, &first, name, d)
	return append(b, '}')
}

// EncodeTableSet renders the answer of Query Tables.
func EncodeTableSet(names []string, d Document) []byte {
	b := []byte{'{'}
	first := true
	if d.Level != NoMetadata {
		b = appendKnownMember(b, &first, memberMetadata)
		b = appendString(b, d.MetadataURL("Tables"))
	}
	b = appendMember(b, &first, "value")
	b = append(b, '[')
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		f := true
		b = appendTableMembers(b, &f, n, d)
		b = append(b, '}')
	}
	return append(b, ']', '}')
}

// EncodeTableRequest renders the body of Create Table.
func EncodeTableRequest(name string) []byte {
	b := []byte{'{'}
	first := true
	b = appendMember(b, &first, PropTableName)
	b = appendString(b, name)
	return append(b, '}')
}

func appendTableMembers(b []byte, first *bool, name string, d Document) []byte {
	if d.Level == FullMetadata {
		b = appendMember(b, first, odataType)
		b = appendString(b, d.Account+".Tables")
		b = appendMember(b, first, odataID)
		b = appendString(b, d.base()+TablePath(name))
		b = appendMember(b, first, odataEditLink)
		b = appendString(b, TablePath(name))
	}
	b = appendMember(b, first, PropTableName)
	return appendString(b, name)
}

// TimestampFromETag reads the instant inside an ETag of the form
// `W/"datetime'2021-09-20T21%3A55%3A33.1005177Z'"` (EVIDENCE.md 2.4). ETags are opaque; this
// succeeds only for that form.
func TimestampFromETag(etag string) (time.Time, bool) {
	s, ok := strings.CutPrefix(etag, `W/"datetime'`)
	if !ok {
		return time.Time{}, false
	}
	s, ok = strings.CutSuffix(s, `'"`)
	if !ok {
		return time.Time{}, false
	}
	s = strings.ReplaceAll(s, "%3A", ":")
	t, err := ParseDateTime(s)
	return t, err == nil
}

// ETagForTimestamp renders the ETag form Storage derives from a Timestamp (EVIDENCE.md 2.4).
func ETagForTimestamp(t time.Time) string {
	return `W/"datetime'` + strings.ReplaceAll(api.FormatDateTime7(t), ":", "%3A") + `'"`
}
