package tableserver

import (
	"bytes"
	"encoding/json"
	"fmt"
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

func isBatchPath(p string) bool { return strings.HasSuffix(p, "/$batch") || p == "$batch" }

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
