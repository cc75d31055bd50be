package tableserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// Flavours of the protocol a Server can speak.
const (
	FlavorStorage = "storage"
	FlavorCosmos  = "cosmos"
)

// CosmosOption configures the Cosmos flavour.
type CosmosOption func(*Cosmos)

// WithRequestUnitsPerSecond gives each account of the Cosmos flavour a request-unit budget,
// as each Cosmos account has its own provisioned throughput: past n units in one second an
// account's request is answered 429 TooManyRequests as recorded, without a retry-after
// header (E-cosmos-throttling). Zero means no budget.
func WithRequestUnitsPerSecond(n int) CosmosOption { return func(c *Cosmos) { c.ruPerSecond = n } }

// Cosmos is the Cosmos DB for Table flavour of a Server: an http.Handler in front of it that
// answers as recorded Cosmos traffic does (EVIDENCE.md, Cosmos DB for Table in recorded
// traffic). It is a protocol and limits layer over the same Server, store and model: it
// refuses what Cosmos does not serve (table ACL, service properties and stats, SAS key
// ranges: 501/405), refuses empty keys (400 PropertiesNeedValue), drops property names that
// differ from an earlier one only in case, lets Accept win over $format, and rewrites answers
// to Cosmos's shapes: its header set (x-ms-request-id as from 2021 to April 2022), error
// bodies and messages, transaction answers, continuation tokens, listing orders
// (cosmos_order.go), seven-digit DateTimes at every metadata level and Timestamp last. Table names are case-sensitive (E-cosmos-documented):
// the model holds them so (reference.WithCaseSensitiveTableNames, in reference.CosmosOptions),
// and the Server matches a transaction's and an ACL's table by the exact name.
type Cosmos struct {
	next        *Server
	ruPerSecond int

	mu      sync.Mutex
	budgets map[string]*requestUnitWindow // by account
}

// requestUnitWindow is what one account has spent of this second's budget.
type requestUnitWindow struct {
	start time.Time
	spent int
}

// cosmosAnswer is what the flavour decided of an answer before the Server's came back.
type cosmosAnswer struct {
	// noMetadata: the client asked for odata=nometadata, and the Server was asked for
	// minimal metadata so that DateTimes are known by their annotation (E-cosmos-shapes).
	noMetadata bool
	// continuation and tableContinuation are the flavour's own NextPartitionKey and
	// NextTableName for the answer ("" for none).
	continuation, tableContinuation string
}

// NewCosmos returns the Cosmos flavour of s, whose backends hold case-sensitive table names
// (reference.CosmosOptions); s is the flavour's from then on.
func NewCosmos(s *Server, opts ...CosmosOption) *Cosmos {
	s.caseSensitiveTables = true
	c := &Cosmos{next: s, budgets: map[string]*requestUnitWindow{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// HTTPServer returns an http.Server for c with the timeouts of its Server.
func (c *Cosmos) HTTPServer(addr string) *http.Server {
	srv := c.next.HTTPServer(addr)
	srv.Handler = c
	return srv
}

// ServeHTTP answers one request as Cosmos DB for Table would.
func (c *Cosmos) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := newRequestID()
	defer func() {
		// A last guard, as the Server's own: counted in Recovered, which tests keep at zero.
		if v := recover(); v != nil {
			c.next.recovered.Add(1)
			writeCosmosErrorTo(w, id, spec.ErrInternalError.New(), false)
		}
	}()
	if !c.charge(c.accountOf(r)) {
		writeCosmosErrorTo(w, id, spec.ErrTooManyRequests.New(), false)
		return
	}
	q := r.URL.Query()
	switch {
	case q.Get("comp") == "acl" || q.Get("restype") == "service":
		// Table ACL, service properties and stats (E-cosmos-unsupported): JSON in full
		// metadata whatever Accept says.
		writeCosmosErrorTo(w, id, spec.ErrNotImplemented.New(), true)
		return
	case r.Method != http.MethodOptions && (q.Has("spk") || q.Has("srk") || q.Has("epk") || q.Has("erk")):
		writeCosmosErrorTo(w, id, spec.ErrMethodNotAllowed.New(), false) // E-cosmos-sas-range, as of 2022
		return
	}
	if q.Has("$format") {
		// Accept wins over $format (E-cosmos-format).
		q.Del("$format")
		r.URL.RawQuery = q.Encode()
	}
	var a cosmosAnswer
	kind := c.resourceKind(r)
	if accept := r.Header.Get("Accept"); strings.Contains(accept, "odata=nometadata") && kind != wire.ResourceBatch && kind != wire.ResourceTables && kind != wire.ResourceTable {
		a.noMetadata = true
		r.Header.Set("Accept", strings.Replace(accept, "odata=nometadata", "odata=minimalmetadata", 1))
	}
	if r.Method == http.MethodGet {
		switch {
		case kind == wire.ResourceTables && q.Get("NextTableName") == cosmosLastTablePage:
			c.emptyTablePage(w, r, id)
			return
		case kind == wire.ResourceTables && c.queryTables(w, r, id, a):
			return
		case kind == wire.ResourceEntitySet && c.queryEntities(w, r, id, a):
			return
		}
	}
	isWrite := r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == "MERGE" || r.Method == http.MethodPatch
	if isWrite && r.Body != nil && r.Body != http.NoBody && !isBatchPath(r.URL.Path) && !isTablesPath(r.URL.Path) {
		body, err := io.ReadAll(io.LimitReader(r.Body, spec.MaxRequestBodyBytes+1))
		if err != nil || len(body) > spec.MaxRequestBodyBytes {
			// Not read whole: the server gets the body as sent and refuses or reads it itself.
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		} else {
			if emptyKey(body) || emptyKeyInPath(r.URL.Path) {
				writeCosmosErrorTo(w, id, spec.ErrPropertiesNeedValue.Newf(spec.CosmosEmptyKeyMessage), true)
				return
			}
			body = dropCaseDuplicates(body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
	} else if isWrite && emptyKeyInPath(r.URL.Path) {
		writeCosmosErrorTo(w, id, spec.ErrPropertiesNeedValue.Newf(spec.CosmosEmptyKeyMessage), true)
		return
	}
	rec := &bufferedAnswer{header: http.Header{}, status: http.StatusOK}
	c.next.ServeHTTP(rec, r)
	c.answer(w, r, rec, id, a)
}

// charge takes one operation's request units from the account's budget for this second,
// or reports false when it is spent.
func (c *Cosmos) charge(account string) bool {
	if c.ruPerSecond <= 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.budgets[account]
	if b == nil {
		b = &requestUnitWindow{}
		c.budgets[account] = b
	}
	now := time.Now()
	if now.Sub(b.start) >= time.Second {
		b.start, b.spent = now, 0
	}
	if b.spent+spec.CosmosRequestUnitsPerOperation > c.ruPerSecond {
		return false
	}
	b.spent += spec.CosmosRequestUnitsPerOperation
	return true
}

// accountOf names the account a request is for, as the Server resolves it (the Host's first
// label, or the first path segment), or "" when it names none the Server knows.
func (c *Cosmos) accountOf(r *http.Request) string {
	name, _ := c.accountAndPath(r)
	return name
}

func (c *Cosmos) accountAndPath(r *http.Request) (account, rest string) {
	p := strings.TrimPrefix(rawPath(r), "/")
	known := func(name string) (string, bool) {
		name = strings.TrimSuffix(name, secondarySuffix)
		_, ok := c.next.accounts[name]
		return name, ok
	}
	if host, ip := c.next.hostOf(r.Host); !ip {
		label, _, _ := strings.Cut(host, ".")
		if name, ok := known(strings.ToLower(label)); ok && label != "localhost" {
			return name, p
		}
	}
	first, rest, _ := strings.Cut(p, "/")
	if name, ok := known(first); ok {
		return name, rest
	}
	return "", p
}

// resourceKind says what a request's path names (0 when it names nothing the Server knows).
func (c *Cosmos) resourceKind(r *http.Request) wire.ResourceKind {
	account, rest := c.accountAndPath(r)
	if account == "" {
		return 0
	}
	res, err := wire.ParseResource(rest)
	if err != nil {
		return 0
	}
	return res.Kind
}

// bufferedAnswer holds the Storage-flavoured answer until it is rewritten.
type bufferedAnswer struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (b *bufferedAnswer) Header() http.Header { return b.header }
func (b *bufferedAnswer) WriteHeader(status int) {
	if !b.wrote {
		b.status, b.wrote = status, true
	}
}
func (b *bufferedAnswer) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}

// cosmosDroppedHeaders are the headers Storage sends and Cosmos never does (E-cosmos-headers).
var cosmosDroppedHeaders = []string{wire.KeyVersion, wire.KeyClientRequestID, wire.KeyDataServiceID,
	"Server", "Cache-Control", "X-Content-Type-Options", wire.KeyErrorCode}

func (c *Cosmos) answer(w http.ResponseWriter, r *http.Request, rec *bufferedAnswer, id string, a cosmosAnswer) {
	h := w.Header()
	for k, v := range rec.header {
		h[k] = v
	}
	for _, k := range cosmosDroppedHeaders {
		h.Del(k)
	}
	h.Set(wire.KeyRequestID, id) // E-cosmos-headers: the era of 2021 to April 2022
	body := rec.body.Bytes()
	status := rec.status
	ct := h.Get("Content-Type")
	switch {
	case status >= 400:
		e := storageError(rec.header.Get(wire.KeyErrorCode), status, body)
		if status == http.StatusBadRequest && e.Code == spec.ErrInvalidInput.Code && r.Method == http.MethodGet && r.URL.Query().Has("$filter") {
			e.Message = spec.CosmosInvalidURLMessage // a filter Cosmos cannot read (E-cosmos-shapes)
		}
		if e.Code == spec.ErrTooManyProperties.Code {
			e.Message = spec.CosmosPropertyCapacityMessage // the flavour's limit, not Cosmos's (E-cosmos-property-limits)
		}
		writeCosmosErrorTo(w, id, e, isWriteMethod(r.Method) && status != http.StatusConflict)
		return
	case strings.HasPrefix(ct, "multipart/mixed") && bytes.Contains(body, []byte(`"code":"`+spec.ErrInvalidDuplicateRow.Code+`"`)):
		// The same row twice is a top-level 400, not a 202 multipart: InvalidDuplicateRow as
		// reported from 2022, its message prefixed with the operation's index as Storage's
		// part is (recorded in 2020 with the code InvalidInput; E-cosmos-batch).
		e := spec.ErrInvalidDuplicateRow.New()
		if m := operationIndex.FindSubmatch(body); m != nil {
			e.Message = string(m[1]) + ":" + e.Message // kept: InvalidDuplicateRow is not in spec.CosmosMessages
		}
		writeCosmosErrorTo(w, id, e, true)
		return
	case strings.HasPrefix(ct, "multipart/mixed"):
		body = cosmosBatchAnswer(body, id)
	case strings.HasPrefix(ct, "application/json"):
		h.Set("Content-Type", cosmosContentType(ct))
		body = cosmosEntityJSON(body)
		if a.noMetadata {
			h.Set("Content-Type", "application/json; odata=nometadata")
			body = withoutMetadata(body)
		}
	}
	if status == http.StatusNoContent {
		h.Set("Content-Type", "application/json") // E-cosmos-headers, 2022 on
	}
	if status == http.StatusCreated && r.Method == http.MethodPost && isTablesPath(r.URL.Path) && h.Get(wire.KeyETag) == "" {
		h.Set(wire.KeyETag, `W/"datetime'`+strings.ReplaceAll(time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z"), ":", "%3A")+`'"`)
	}
	if a.tableContinuation != "" {
		h.Set(wire.HeaderNextTableName, a.tableContinuation)
	}
	if a.continuation != "" {
		h.Set(wire.HeaderNextPartitionKey, a.continuation)
		h.Set(wire.HeaderNextRowKey, "NA")
	}
	if body != nil && h.Get("Content-Length") != "" {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func isWriteMethod(m string) bool {
	return m == http.MethodPost || m == http.MethodPut || m == "MERGE" || m == http.MethodPatch || m == http.MethodDelete
}

// cosmosContentType writes JSON media types as Cosmos does: "application/json; odata=..."
// without Storage's streaming and charset parameters.
func cosmosContentType(ct string) string {
	media, params, _ := strings.Cut(ct, ";")
	for _, p := range strings.Split(params, ";") {
		if level, ok := strings.CutPrefix(strings.TrimSpace(p), "odata="); ok {
			return media + "; odata=" + level
		}
	}
	return media
}

var (
	operationIndex     = regexp.MustCompile(`"value":"(\d+):`)
	storageMessageTail = regexp.MustCompile(`(?s)\nRequestId:.*$`)
	xmlErrorCode       = regexp.MustCompile(`<code>([^<]*)</code>`)
	xmlErrorMessage    = regexp.MustCompile(`(?s)<message[^>]*>(.*?)</message>`)
)

// storageError reads the Storage-flavoured error answer back into a *spec.Error.
func storageError(code string, status int, body []byte) *spec.Error {
	e := &spec.Error{Status: status, Code: code}
	var doc struct {
		Err struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if json.Unmarshal(body, &doc) == nil && doc.Err.Code != "" {
		e.Code, e.Message = doc.Err.Code, doc.Err.Message.Value
	} else if m := xmlErrorCode.FindSubmatch(body); m != nil {
		e.Code = string(m[1])
		if mm := xmlErrorMessage.FindSubmatch(body); mm != nil {
			e.Message = html.UnescapeString(string(mm[1])) // "&#xA;" before RequestId
		}
	}
	e.Message = storageMessageTail.ReplaceAllString(e.Message, "")
	if e.Code == "" {
		e.Code = http.StatusText(status)
	}
	return e
}

// cosmosErrorBody renders Cosmos's error body: lang en-us and a message ending in
// "RequestID:<id>" and a newline, after an ActivityId line for the codes whose recorded
// answers have one (E-cosmos-shapes).
func cosmosErrorBody(e *spec.Error, id string) []byte {
	var v struct {
		Err struct {
			Code    string `json:"code"`
			Message struct {
				Lang  string `json:"lang"`
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	v.Err.Code = e.Code
	v.Err.Message.Lang = spec.CosmosErrorLang
	msg := e.Message
	if m, ok := spec.CosmosMessages[e.Code]; ok {
		msg = m
	}
	switch {
	case e.Code == spec.ErrTooManyRequests.Code:
		now := time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")
		msg += fmt.Sprintf(spec.CosmosThrottledLines, id, newRequestID(), newRequestID(), newRequestID(), 1, now, now)
	case spec.CosmosActivityCodes[e.Code]:
		msg += "\r\nActivityId: " + id + spec.CosmosActivitySuffix
	}
	v.Err.Message.Value = msg + "\nRequestID:" + id + "\n"
	b, _ := json.Marshal(v)
	return b
}

// writeCosmosErrorTo answers e; a write's error carries full metadata, a read's, a
// conflict's and a throttled request's minimal metadata (E-cosmos-shapes).
func writeCosmosErrorTo(w http.ResponseWriter, id string, e *spec.Error, fullMetadata bool) {
	h := w.Header()
	for _, k := range cosmosDroppedHeaders {
		h.Del(k)
	}
	h.Del("Content-Length")
	h.Set(wire.KeyRequestID, id)
	if fullMetadata {
		h.Set("Content-Type", "application/json; odata=fullmetadata")
	} else {
		h.Set("Content-Type", "application/json; odata=minimalmetadata")
	}
	body := cosmosErrorBody(e, id)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}

func isBatchPath(p string) bool  { return strings.HasSuffix(p, "/$batch") || p == "$batch" }
func isTablesPath(p string) bool { return strings.HasSuffix(p, "/Tables") || p == "Tables" }

var pathKeys = regexp.MustCompile(`\(PartitionKey='([^']*)',\s*RowKey='([^']*)'\)$`)

// emptyKeyInPath reports whether an entity URL names an empty PartitionKey or RowKey.
func emptyKeyInPath(p string) bool {
	m := pathKeys.FindStringSubmatch(p)
	return m != nil && (m[1] == "" || m[2] == "")
}

// emptyKey reports whether an entity body sends an empty PartitionKey or RowKey.
func emptyKey(body []byte) bool {
	var keys struct {
		PartitionKey *string
		RowKey       *string
	}
	if json.Unmarshal(body, &keys) != nil {
		return false
	}
	return keys.PartitionKey != nil && *keys.PartitionKey == "" || keys.RowKey != nil && *keys.RowKey == ""
}

// member is one member of a JSON object, in the order it came.
type member struct {
	name  string
	value json.RawMessage
}

// objectMembers reads a JSON object's members in order; ok is false when body is not one.
func objectMembers(body []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{name, v})
	}
	return out, true
}

func encodeMembers(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(m.name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// cosmosFoldedNames are the property names of which Cosmos keeps one spelling only: with
// etag and Etag sent, Etag was dropped without an error; other names that differ only in
// case (Birthday, birthday) were both stored (E-cosmos-name-case).
var cosmosFoldedNames = map[string]bool{"etag": true}

// dropCaseDuplicates keeps, of the spellings of a name of cosmosFoldedNames, the first one
// (with its annotations) and drops the others without an error (E-cosmos-name-case).
func dropCaseDuplicates(body []byte) []byte {
	ms, ok := objectMembers(body)
	if !ok {
		return body
	}
	seen := map[string]string{} // lower-case property name -> the name kept
	var out []member
	dropped := false
	for _, m := range ms {
		prop, _, _ := strings.Cut(m.name, "@")
		lower := strings.ToLower(prop)
		if !cosmosFoldedNames[lower] {
			out = append(out, m)
			continue
		}
		if kept, ok := seen[lower]; ok && kept != prop {
			dropped = true
			continue
		}
		seen[lower] = prop
		out = append(out, m)
	}
	if !dropped {
		return body
	}
	return encodeMembers(out)
}

// cosmosEntityJSON rewrites an entity, or a query page of them, as Cosmos answers: Timestamp
// last and DateTime values with seven fractional digits (E-cosmos-shapes).
func cosmosEntityJSON(body []byte) []byte {
	ms, ok := objectMembers(body)
	if !ok {
		return body
	}
	for i, m := range ms {
		if m.name == "value" && len(m.value) > 0 && m.value[0] == '[' {
			var items []json.RawMessage
			if json.Unmarshal(m.value, &items) != nil {
				return body
			}
			var b bytes.Buffer
			b.WriteByte('[')
			for j, it := range items {
				if j > 0 {
					b.WriteByte(',')
				}
				b.Write(cosmosEntity(it))
			}
			b.WriteByte(']')
			ms[i].value = b.Bytes()
			return encodeMembers(ms)
		}
	}
	return cosmosEntity(body)
}

// withoutMetadata rewrites an answer in minimal metadata as odata=nometadata: without the
// odata.* members and the properties' annotations, at any depth of a query page.
func withoutMetadata(body []byte) []byte {
	ms, ok := objectMembers(body)
	if !ok {
		return body
	}
	out := ms[:0]
	for _, m := range ms {
		if strings.HasPrefix(m.name, "odata.") || strings.Contains(m.name, "@odata.") {
			continue
		}
		if m.name == "value" && len(m.value) > 0 && m.value[0] == '[' {
			var items []json.RawMessage
			if json.Unmarshal(m.value, &items) == nil {
				var b bytes.Buffer
				b.WriteByte('[')
				for j, it := range items {
					if j > 0 {
						b.WriteByte(',')
					}
					b.Write(withoutMetadata(it))
				}
				b.WriteByte(']')
				m.value = b.Bytes()
			}
		}
		out = append(out, m)
	}
	return encodeMembers(out)
}

var fraction = regexp.MustCompile(`^"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,7}))?Z"$`)

func cosmosEntity(body []byte) []byte {
	ms, ok := objectMembers(body)
	if !ok {
		return body
	}
	dateTimes := map[string]bool{"Timestamp": true}
	for _, m := range ms {
		if prop, ok := strings.CutSuffix(m.name, "@odata.type"); ok && string(m.value) == `"Edm.DateTime"` {
			dateTimes[prop] = true
		}
	}
	var out, last []member
	for _, m := range ms {
		if dateTimes[m.name] {
			if f := fraction.FindSubmatch(m.value); f != nil {
				digits := string(f[2]) + strings.Repeat("0", 7-len(f[2]))
				m.value = []byte(`"` + string(f[1]) + "." + digits + `Z"`)
			}
		}
		if m.name == "Timestamp" || m.name == "Timestamp@odata.type" {
			last = append(last, m)
			continue
		}
		out = append(out, m)
	}
	return encodeMembers(append(out, last...))
}

// cosmosBatchAnswer rewrites a transaction's answer as Cosmos writes it (E-cosmos-batch):
// LF-only part headers, 404 ResourceNotFound for a missing table without an index, error
// parts with full metadata and Cosmos's error body.
func cosmosBatchAnswer(body []byte, id string) []byte {
	m := changesetBoundary.FindStringSubmatch(string(body))
	if m == nil {
		return body
	}
	delim := "--" + m[1]
	parts := strings.Split(string(body), delim)
	var out strings.Builder
	out.WriteString(parts[0])
	for i, p := range parts[1:] {
		if rest, closing := strings.CutPrefix(p, "--"); closing {
			out.WriteString(delim + "--\n" + strings.TrimPrefix(rest, "\r\n"))
			continue
		}
		out.WriteString(delim + "\n" + cosmosBatchPart(p, i+1, id))
	}
	return []byte(out.String())
}

var changesetBoundary = regexp.MustCompile(`boundary=(changesetresponse_[0-9A-Za-z-]+)`)

// cosmosBatchPart rewrites one part of a change set's answer (after its boundary line):
// LF-only part headers; a success keeps ETag, Preference-Applied and Location and gets
// Content-ID, its number in the change set from 1; a failure is Cosmos's error body in full
// metadata, a missing table 404 ResourceNotFound without an index (E-cosmos-batch).
func cosmosBatchPart(p string, n int, id string) string {
	_, msg, ok := strings.Cut(strings.TrimPrefix(p, "\r\n"), "\r\n\r\n")
	if !ok {
		return p
	}
	head, tail, ok := strings.Cut(msg, "\r\n\r\n")
	if !ok {
		return p
	}
	lines := strings.Split(head, "\r\n")
	status := 0
	if f := strings.Fields(lines[0]); len(f) >= 2 {
		status, _ = strconv.Atoi(f[1])
	}
	var b strings.Builder
	b.WriteString("Content-Type: application/http\nContent-Transfer-Encoding: binary\n\n")
	b.WriteString(lines[0] + "\r\n")
	if status >= 400 {
		body, after, _ := strings.Cut(tail, "\r\n")
		e := storageError("", status, []byte(body))
		if e.Code == spec.ErrTableNotFound.Code {
			e.Code, e.Message = spec.ErrResourceNotFound.Code, spec.ErrResourceNotFound.Message
		}
		b.WriteString("Content-Type: application/json;odata=fullmetadata\r\n\r\n")
		b.Write(cosmosErrorBody(e, id))
		b.WriteString("\r\n" + after)
		return b.String()
	}
	header := map[string]string{}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ": "); ok {
			header[http.CanonicalHeaderKey(k)] = v
		}
	}
	for _, k := range []string{"Content-Type", "Etag", "Preference-Applied", "Location"} {
		if v, ok := header[k]; ok {
			name := k
			if k == "Etag" {
				name = "ETag"
			}
			if k == "Content-Type" {
				v = cosmosContentType(v)
			}
			b.WriteString(name + ": " + v + "\r\n")
		}
	}
	b.WriteString("Content-ID: " + strconv.Itoa(n) + "\r\n\r\n" + tail)
	return b.String()
}

// cosmosLastTablePage is the NextTableName of a Query Tables page that ended exactly at
// $top with no table left: following it gives an empty page.
const cosmosLastTablePage = "cosmos-end-of-tables"

// emptyTablePage answers the page after cosmosLastTablePage: no tables, no continuation.
func (c *Cosmos) emptyTablePage(w http.ResponseWriter, r *http.Request, id string) {
	body := []byte(`{"value":[]}`)
	accept := r.Header.Get("Accept")
	if !strings.Contains(accept, "nometadata") {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base := strings.TrimSuffix(r.URL.Path, "Tables")
		body = []byte(`{"value":[],"odata.metadata":"` + scheme + "://" + r.Host + base + `$metadata#Tables"}`)
	}
	level := "minimalmetadata"
	for _, l := range []string{"nometadata", "fullmetadata"} {
		if strings.Contains(accept, l) {
			level = l
		}
	}
	w.Header().Set(wire.KeyRequestID, id)
	w.Header().Set("Content-Type", "application/json; odata="+level)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// String describes the flavour for logs.
func (c *Cosmos) String() string {
	if c.ruPerSecond > 0 {
		return fmt.Sprintf("cosmos flavour, %d request units per second", c.ruPerSecond)
	}
	return "cosmos flavour"
}
