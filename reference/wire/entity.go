package wire

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

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
