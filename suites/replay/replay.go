package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/wire"
)

// Profiles of a replay: which recordings it compares against.
const (
	// ProfileStorage replays recordings of Azure Table Storage (the default).
	ProfileStorage = "storage"
	// ProfileCosmos replays recordings of Azure Cosmos DB for Table.
	ProfileCosmos = "cosmos"
)

// Target is the account a replay sends its requests to.
type Target struct {
	// Name names the backend in reports.
	Name string
	// Endpoint is the table endpoint (https://acct.table.core.windows.net or a path-style
	// http://127.0.0.1:10002/devstoreaccount1).
	Endpoint string
	// Account and Key sign requests with Shared Key and SAS tokens.
	Account string
	Key     []byte
	// Client sends the requests (default: a client with a 30 s timeout).
	Client *http.Client
}

// Replayer replays recordings against one target. It is not safe for concurrent use.
type Replayer struct {
	Target Target
	// Profile is ProfileStorage (default) or ProfileCosmos.
	Profile string
	// TablePrefix starts the name of every table a replay creates; each recording gets its
	// own prefix (TablePrefix and a sequence number), so recordings never share state. It
	// must be letters and digits, starting with a letter (default "cfreplay").
	TablePrefix string
	// Now is the clock for request dates and SAS expiry (default time.Now).
	Now func() time.Time
	// Strict compares what the default comparison leaves to the service: the order of
	// entities under the cosmos profile (tables are still compared as a set) and the first
	// line of an error's message.
	Strict bool

	seq int
}

// maxAnswerBytes bounds how much of one answer is read.
const maxAnswerBytes = 16 << 20

// state is what one recording's replay has learnt: the names its tables got and the live
// counterparts of recorded ETags, continuation tokens and entity Timestamps.
type state struct {
	prefix string
	// unordered: the recorded service promises no order of results (Cosmos DB,
	// E-cosmos-order), so entities and tables are compared as sets.
	unordered bool
	// strict: entities are compared in order under any profile, and error messages' first
	// lines are compared (Replayer.Strict).
	strict bool
	tables map[string]string   // lower-case recorded name -> live name
	back   map[string]string   // lower-case live name -> recorded name
	etags  map[string]string   // recorded -> live
	tokens map[string]string   // recorded continuation value -> live
	times  map[int64]time.Time // recorded entity Timestamp (Unix ns) -> live
}

// Replay sends every exchange of rec to the target in order and compares the answers; what
// could not be replayed is in the result with its reason. The tables it creates are deleted
// at the end, unless the target stopped answering.
func (r *Replayer) Replay(ctx context.Context, rec Recording) (res RecordingResult) {
	res = RecordingResult{Name: rec.Name, Format: rec.Format}
	if reason := r.skipRecording(rec); reason != "" {
		res.Skipped = reason
		return res
	}
	r.seq++
	prefix := r.TablePrefix
	if prefix == "" {
		prefix = "cfreplay"
	}
	for len(prefix) < 7 {
		prefix += "x"
	}
	st := &state{prefix: fmt.Sprintf("%s%03d", prefix[:7], r.seq%1000), tables: map[string]string{}, back: map[string]string{},
		etags: map[string]string{}, tokens: map[string]string{}, times: map[int64]time.Time{}, unordered: r.Profile == ProfileCosmos, strict: r.Strict}
	for _, name := range recordedTables(rec) {
		st.table(name)
	}
	// Even after an exchange got no answer: a lost answer may hide a table created. The
	// cleanup retries as the SDKs do, within a bound that is short when the backend has
	// stopped answering.
	defer func() {
		budget := cleanupBudget
		if res.NoAnswer {
			budget = cleanupBudgetNoAnswer
		}
		r.cleanup(st, budget)
	}()
	created := map[string]bool{}
	for _, name := range tablesToCreate(rec) {
		if err := r.createTable(ctx, st.table(name)); err != nil {
			res.Skipped = fmt.Sprintf("could not create table %s that the recording uses without creating it: %v", name, err)
			res.NoAnswer = !errors.As(err, new(statusError))
			return res
		}
		created[strings.ToLower(name)] = true
	}
	for _, s := range entitiesToSeed(rec, created) {
		if err := r.insertSeed(ctx, st, s); err != nil {
			res.Skipped = fmt.Sprintf("could not insert entity (%q,%q) that the recording reads without writing it: %v", s.entity.PartitionKey, s.entity.RowKey, err)
			res.NoAnswer = !errors.As(err, new(statusError))
			return res
		}
	}
	for i, x := range rec.Entries {
		xr := ExchangeResult{Index: i, Method: x.Method, Path: displayPath(x.URI)}
		if reason := skipExchange(x); reason != "" {
			xr.Outcome, xr.Reason = OutcomeSkipped, reason
			res.Exchanges = append(res.Exchanges, xr)
			continue
		}
		live, err := r.sendRetrying(ctx, st, x)
		if err != nil {
			xr.Outcome, xr.Reason = OutcomeSkipped, "no answer: "+err.Error()
			res.Exchanges = append(res.Exchanges, xr)
			// Later exchanges depend on this one; a backend that did not answer is not
			// waited for again.
			res.NoAnswer = true
			for j := i + 1; j < len(rec.Entries); j++ {
				res.Exchanges = append(res.Exchanges, ExchangeResult{Index: j, Method: rec.Entries[j].Method, Path: displayPath(rec.Entries[j].URI),
					Outcome: OutcomeSkipped, Reason: "not sent: an earlier request of this recording got no answer"})
			}
			return res
		}
		st.learn(x, live)
		xr.Differences = compare(st, x, live)
		xr.Recorded, xr.Live = summarize(st, x.Status, x.ResponseHeader, x.ResponseBody, false), summarize(st, live.Status, live.ResponseHeader, live.ResponseBody, true)
		xr.Outcome = OutcomeAgree
		if len(xr.Differences) > 0 {
			xr.Outcome = OutcomeDisagree
		}
		res.Exchanges = append(res.Exchanges, xr)
	}
	return res
}

// retryBudget bounds how long one exchange is sent again while the target answers "try
// again later" where the recorded service did not.
const retryBudget = 45 * time.Second

// sendRetrying sends x and, while the target answers 409 TableBeingDeleted or 503
// ServerBusy and the recording holds another answer, sends it again: the recorded client
// waited for the same state (a test that recreates a deleted table retries until the
// service lets it), and a replay runs faster than the recording did.
func (r *Replayer) sendRetrying(ctx context.Context, st *state, x Exchange) (answer, error) {
	deadline := time.Now().Add(retryBudget)
	for {
		live, err := r.send(ctx, st, x)
		if err != nil || live.Status == x.Status || time.Now().After(deadline) {
			return live, err
		}
		code := errorCode(live.Status, live.ResponseHeader, live.ResponseBody)
		if code != "TableBeingDeleted" && code != "ServerBusy" {
			return live, nil
		}
		select {
		case <-ctx.Done():
			return live, nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// isCosmos reports whether a recorded host is Cosmos DB for Table's.
func isCosmos(host string) bool {
	h := strings.ToLower(host)
	return strings.Contains(h, "cosmos.azure.com") || strings.Contains(h, "cosmosdb") || strings.Contains(h, "documents.azure.com") || strings.Contains(h, "cosmos.")
}

var otherServiceHost = regexp.MustCompile(`(?i)\.(blob|queue|file|dfs|web)\.`)

// skipRecording says why a whole recording cannot be replayed with this profile, or "".
func (r *Replayer) skipRecording(rec Recording) string {
	tableExchanges, cosmos := 0, 0
	for _, x := range rec.Entries {
		u, err := url.Parse(x.URI)
		if err != nil || u.Host == "" {
			return "an exchange has no absolute URI: " + displayPath(x.URI)
		}
		if otherServiceHost.MatchString(u.Host) || isIdentityHost(u.Host) {
			continue
		}
		tableExchanges++
		if isCosmos(u.Host) {
			cosmos++
		}
	}
	switch {
	case rec.Variables[OverlapVariable] == "true":
		return "its requests overlapped in time when recorded, so the order they took effect in is unknown"
	case tableExchanges == 0:
		return "not a Table API recording (other services only: blob, queue, file or identity)"
	case cosmos > 0 && r.Profile != ProfileCosmos:
		return "a Cosmos DB for Table recording (replayed with --profile cosmos)"
	case cosmos == 0 && r.Profile == ProfileCosmos:
		return "an Azure Storage recording (--profile cosmos replays Cosmos DB recordings only)"
	}
	return ""
}

func isIdentityHost(host string) bool {
	h := strings.ToLower(host)
	return strings.Contains(h, "login.microsoftonline") || strings.Contains(h, "login.windows.net") || strings.Contains(h, "management.azure.com")
}

// skipExchange says why one exchange cannot be replayed, or "".
func skipExchange(x Exchange) string {
	u, _ := url.Parse(x.URI)
	q := u.Query()
	switch {
	case otherServiceHost.MatchString(u.Host):
		return "another service (blob, queue or file)"
	case isIdentityHost(u.Host):
		return "an OAuth or RBAC exchange with the identity platform"
	case strings.EqualFold(q.Get("restype"), "service") && (strings.EqualFold(q.Get("comp"), "stats") || strings.EqualFold(q.Get("comp"), "properties")):
		return "service properties or stats: account-wide state of a shared account"
	case x.Method == http.MethodOptions:
		return "a CORS preflight: it depends on the account's CORS rules"
	case strings.HasPrefix(strings.ToLower(hget(x.RequestHeader, "Authorization")), "bearer") && (x.Status == 401 || x.Status == 403):
		return "an RBAC answer to an OAuth token: the replay signs with Shared Key"
	case x.Status == http.StatusForbidden && errorCode(x.Status, x.ResponseHeader, x.ResponseBody) == "AuthenticationFailed":
		return "a recorded authentication failure: the replay signs every request afresh, so a wrong signature cannot be sent again"
	case x.Status >= 500 && x.Status != http.StatusNotImplemented:
		return fmt.Sprintf("the recorded answer is a server error (%d)", x.Status)
	case x.Status == http.StatusRequestTimeout:
		return "the recorded answer is a timeout"
	case x.Status == http.StatusTooManyRequests:
		return "the recorded answer is throttling (429): the client sent the request again (E-cosmos-throttling)"
	}
	return ""
}

// validTableName is the service's rule for table names (EVIDENCE.md 2.1).
var validTableName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

// runTablePrefix matches the prefix of the tables a conform run creates ("cf" and a run id
// of 8 letters and digits).
var runTablePrefix = regexp.MustCompile(`^(?i)cf[a-z0-9]{8}`)

// table returns the live name of a recorded table name, assigning one on first use. The
// live name keeps what the service judges: a name that is not valid is sent as recorded (it
// creates nothing), and a valid one keeps its length where it is at the limit. A conform
// run's prefix is replaced by the replay's (both 10 characters); any other name gets the
// replay's prefix in front, trimmed from its start to at most 63 characters. The case of
// each mention is kept.
func (s *state) table(recorded string) string {
	k := strings.ToLower(recorded)
	if !validTableName.MatchString(recorded) || k == "tables" {
		return recorded
	}
	var live string
	switch {
	case runTablePrefix.MatchString(recorded) && len(s.prefix) == 10:
		live = s.prefix + recorded[10:]
	case len(s.prefix)+len(recorded) > 63:
		live = s.prefix + recorded[len(s.prefix)+len(recorded)-63:]
	default:
		live = s.prefix + recorded
	}
	if prev, ok := s.tables[k]; ok && !strings.EqualFold(prev, live) {
		return prev
	}
	s.tables[k] = live
	s.back[strings.ToLower(live)] = recorded
	return live
}

// recordedName maps a live table name back to its recorded name; ok is false for a table
// of another run or recording.
func (s *state) recordedName(live string) (string, bool) {
	n, ok := s.back[strings.ToLower(live)]
	return n, ok
}

// resourceOf splits a recorded URI into the path relative to the table endpoint (the account
// segment of a path-style URI removed) and the query.
func resourceOf(raw string) (path string, q url.Values) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", url.Values{}
	}
	p := u.EscapedPath()
	if pathStyle(u.Host) {
		p = strings.TrimPrefix(p, "/")
		if i := strings.IndexByte(p, '/'); i >= 0 {
			p = p[i:]
		} else {
			p = ""
		}
	}
	return strings.TrimPrefix(p, "/"), u.Query()
}

// pathStyle reports whether a host puts the account in the path (emulators, IP addresses).
func pathStyle(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	return net.ParseIP(h) != nil || strings.EqualFold(h, "localhost") || !strings.Contains(h, ".")
}

// tableOfPath returns the table a relative path names: "t", "t()", "t(PartitionKey=...)",
// "Tables('t')"; "" for Tables, $batch and the service.
func tableOfPath(p string) string {
	p, _ = url.PathUnescape(p)
	seg, _, _ := strings.Cut(p, "/")
	switch {
	case seg == "" || strings.HasPrefix(seg, "$"):
		return ""
	case strings.HasPrefix(strings.ToLower(seg), "tables("):
		inner := strings.TrimSuffix(seg[len("tables("):], ")")
		return strings.Trim(inner, "'")
	case strings.EqualFold(seg, "tables"):
		return ""
	}
	name, _, _ := strings.Cut(seg, "(")
	return name
}

// rewritePath renames the table of a relative path.
func (s *state) rewritePath(p string) string {
	t := tableOfPath(p)
	if t == "" {
		return p
	}
	live := s.table(t)
	unescaped, _ := url.PathUnescape(p)
	if i := strings.Index(strings.ToLower(unescaped), "tables('"+strings.ToLower(t)+"')"); i == 0 {
		return escapePath("Tables('" + live + "')" + unescaped[len("Tables('"+t+"')"):])
	}
	return escapePath(live + unescaped[len(t):])
}

// escapePath escapes a relative path as the SDKs do: quotes and parentheses kept, the rest of
// what is not allowed in a path segment percent-encoded.
func escapePath(p string) string {
	u := url.URL{Path: "/" + p}
	e := u.EscapedPath()
	e = strings.NewReplacer("%27", "'", "%28", "(", "%29", ")").Replace(e)
	return strings.TrimPrefix(e, "/")
}

var batchRequestLine = regexp.MustCompile(`(?m)^(GET|POST|PUT|PATCH|MERGE|DELETE) (\S+) (HTTP/1\.1\r?)$`)

// recordedTables lists the tables a recording names, in order of first mention.
func recordedTables(rec Recording) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[strings.ToLower(n)] {
			seen[strings.ToLower(n)] = true
			out = append(out, n)
		}
	}
	for _, x := range rec.Entries {
		for _, n := range tablesOfExchange(x) {
			add(n)
		}
	}
	return out
}

func tablesOfExchange(x Exchange) []string {
	var out []string
	p, _ := resourceOf(x.URI)
	if t := tableOfPath(p); t != "" {
		out = append(out, t)
	}
	if strings.EqualFold(p, "Tables") && x.Method == http.MethodPost {
		if n, err := wire.DecodeTableName(x.RequestBody); err == nil && n != "" {
			out = append(out, n)
		}
	}
	if isBatchPath(p) {
		for _, m := range batchRequestLine.FindAllStringSubmatch(string(x.RequestBody), -1) {
			if t := tableOfPath(partPath(m[2])); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

func isBatchPath(p string) bool { return strings.EqualFold(strings.TrimSuffix(p, "/"), "$batch") }

func partPath(raw string) string {
	if strings.Contains(raw, "://") {
		p, _ := resourceOf(raw)
		return p
	}
	return strings.TrimPrefix(raw, "/")
}

// tablesToCreate lists the tables a recording uses before (or without) creating them: the
// first exchange that names the table is neither a successful Create Table nor an answer
// that the table does not exist.
func tablesToCreate(rec Recording) []string {
	var out []string
	decided := map[string]bool{}
	for _, x := range rec.Entries {
		if skipExchange(x) != "" {
			continue
		}
		p, _ := resourceOf(x.URI)
		for _, t := range tablesOfExchange(x) {
			k := strings.ToLower(t)
			if decided[k] {
				continue
			}
			decided[k] = true
			isCreate := strings.EqualFold(p, "Tables") && x.Method == http.MethodPost
			code := errorCode(x.Status, x.ResponseHeader, x.ResponseBody)
			switch {
			case isCreate && code == "TableAlreadyExists":
				out = append(out, t)
			case isCreate:
			case code == "TableNotFound" || code == "ResourceNotFound" || code == "OutOfRangeInput" || code == "InvalidResourceName":
			case x.Status == http.StatusBadRequest && !isCreate:
			case x.Status == http.StatusAccepted && isBatchPath(p) && batchTableMissing(x):
			default:
				out = append(out, t)
			}
		}
	}
	return out
}

// recordedBatchResponse parses a recorded batch answer. The test proxy sanitises the
// boundary of the Content-Type header (batchresponse_00000000-...) but not the body's, so
// the boundary the body opens with is the one to read it by.
func recordedBatchResponse(x Exchange) (wire.BatchResponse, error) {
	return wire.ParseBatchResponse(batchContentType(hget(x.ResponseHeader, "Content-Type"), x.ResponseBody), x.ResponseBody)
}

// batchContentType is ct with the boundary body opens with, where the recorded header's
// boundary was sanitised (the test proxy writes batch_00000000-... and
// batchresponse_00000000-... in headers, never in bodies).
func batchContentType(ct string, body []byte) string {
	if first, _, ok := bytes.Cut(body, []byte("\n")); ok && bytes.HasPrefix(first, []byte("--")) {
		if b := string(bytes.TrimSpace(first[2:])); b != "" && !strings.Contains(ct, b) {
			return "multipart/mixed; boundary=" + b
		}
	}
	return ct
}

// batchTableMissing reports whether a recorded batch answer says its table does not exist
// (Storage's TableNotFound, Cosmos DB's ResourceNotFound: E-cosmos-batch).
func batchTableMissing(x Exchange) bool {
	br, err := recordedBatchResponse(x)
	if err != nil {
		return false
	}
	for _, p := range append(br.Changeset, br.Retrieves...) {
		if p.Status == http.StatusNotFound && (bytes.Contains(p.Body, []byte("TableNotFound")) || bytes.Contains(p.Body, []byte("ResourceNotFound"))) {
			return true
		}
	}
	return false
}

// answer is what the target sent back.
type answer struct {
	Status         int
	ResponseHeader http.Header
	ResponseBody   []byte
}

func (r *Replayer) client() *http.Client {
	if r.Target.Client != nil {
		return r.Target.Client
	}
	return &http.Client{Timeout: 30 * time.Second}
}

func (r *Replayer) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// sasParams are the query parameters of a SAS.
var sasParams = []string{"sv", "ss", "srt", "sp", "se", "st", "spr", "sip", "sig", "tn", "spk", "srk", "epk", "erk", "si", "ses", "sr", "skoid", "sktid"}

// hopHeaders are not copied from a recorded request: the transport, the signature and the
// browser set their own.
var hopHeaders = map[string]bool{
	"authorization": true, "x-ms-date": true, "date": true, "content-length": true, "host": true,
	"connection": true, "accept-encoding": true, "transfer-encoding": true, "origin": true, "referer": true,
	"cookie": true, "keep-alive": true, "expect": true, "accept-language": true, "cache-control": true,
}

func (r *Replayer) send(ctx context.Context, st *state, x Exchange) (answer, error) {
	p, q := resourceOf(x.URI)
	p = st.rewritePath(p)
	recordedSAS := url.Values{}
	for _, k := range sasParams {
		if q.Has(k) {
			recordedSAS[k] = q[k]
			q.Del(k)
		}
	}
	for _, k := range []string{"NextPartitionKey", "NextRowKey", "NextTableName"} {
		if v := q.Get(k); v != "" {
			q.Set(k, st.token(v))
		}
	}
	if f := q.Get("$filter"); f != "" {
		f = st.rewriteQuoted(f)
		if strings.EqualFold(p, "Tables") {
			f = st.rewriteTableNameLiterals(f)
		}
		q.Set("$filter", st.rewriteTimes(f))
	}
	sas, err := r.reissueSAS(st, recordedSAS, recordedTime(x))
	if err != nil {
		return answer{}, err
	}
	for k, vs := range sas {
		q[k] = vs
	}
	endpoint := strings.TrimSuffix(r.Target.Endpoint, "/")
	target := endpoint + "/" + p
	if enc := encodeQuery(q); enc != "" {
		target += "?" + enc
	}
	body := x.RequestBody
	if strings.EqualFold(p, "Tables") && x.Method == http.MethodPost && len(body) > 0 {
		if n, err := wire.DecodeTableName(body); err == nil {
			body = bytes.Replace(body, []byte(`"`+jsonEscape(n)+`"`), []byte(`"`+jsonEscape(st.table(n))+`"`), 1)
		}
	}
	if isBatchPath(p) {
		body = st.rewriteBatch(body, endpoint)
	}
	req, err := http.NewRequestWithContext(ctx, x.Method, target, bytes.NewReader(body))
	if err != nil {
		return answer{}, fmt.Errorf("build request: %v", err)
	}
	if u, err := url.Parse(target); err == nil {
		req.URL.RawPath = u.EscapedPath()
	}
	for k, vs := range x.RequestHeader {
		if hopHeaders[strings.ToLower(k)] || strings.HasPrefix(strings.ToLower(k), "sec-") {
			continue
		}
		for _, v := range vs {
			if strings.EqualFold(k, "If-Match") || strings.EqualFold(k, "If-None-Match") {
				v = st.etag(v)
			}
			req.Header.Add(k, v)
		}
	}
	if isBatchPath(p) {
		req.Header.Set("Content-Type", batchContentType(req.Header.Get("Content-Type"), body))
	}
	if len(body) == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if len(sas) == 0 {
		wire.SignRequest(req, wire.SharedKey, r.Target.Account, r.Target.Key, r.now())
	}
	resp, err := r.client().Do(req)
	if err != nil {
		return answer{}, redactErr(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return answer{}, fmt.Errorf("read answer: %v", redactErr(err))
	}
	return answer{Status: resp.StatusCode, ResponseHeader: resp.Header, ResponseBody: data}, nil
}

func redactErr(err error) error {
	return fmt.Errorf("%s", sigParam.ReplaceAllString(err.Error(), "${1}REDACTED"))
}

func jsonEscape(s string) string {
	b := &strings.Builder{}
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// encodeQuery encodes q with its keys sorted, keeping $ in keys as SDKs send it.
func encodeQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		for _, v := range q[k] {
			parts = append(parts, strings.ReplaceAll(url.QueryEscape(k), "%24", "$")+"="+strings.ReplaceAll(url.QueryEscape(v), "+", "%20"))
		}
	}
	return strings.Join(parts, "&")
}

var quotedRunPrefix = regexp.MustCompile(`(?i)'cf[a-z0-9]{8}`)

// rewriteQuoted renames recorded table names quoted in a filter ('name'), and swaps a conform
// run's prefix at the start of any quoted literal (a range of a run's tables) for the
// replay's.
func (s *state) rewriteQuoted(f string) string {
	for k, live := range s.tables {
		re := regexp.MustCompile(`(?i)'` + regexp.QuoteMeta(k) + `'`)
		f = re.ReplaceAllLiteralString(f, "'"+live+"'")
	}
	if len(s.prefix) == 10 {
		f = quotedRunPrefix.ReplaceAllStringFunc(f, func(lit string) string {
			if strings.HasPrefix(strings.ToLower(lit[1:]), strings.ToLower(s.prefix)) {
				return lit
			}
			return "'" + s.prefix
		})
	}
	return f
}

// tableNameLiteral is a comparison of TableName with a string literal in a Query Tables
// filter ("TableName ge 'mytable'", either side).
var tableNameLiteral = regexp.MustCompile(`(?i)(\bTableName\s+(?:eq|ne|gt|ge|lt|le)\s+)'((?:[^']|'')*)'|'((?:[^']|'')*)'(\s+(?:eq|ne|gt|ge|lt|le)\s+TableName\b)`)

// rewriteTableNameLiterals gives every literal a Query Tables filter compares TableName with
// the replay's prefix, as the tables of the recording got it: a range of names
// ("TableName ge 'pytables' and TableName lt 'pytablet'") then selects the replay's tables
// the recording's selected. A literal already renamed (a recorded table, rewriteQuoted) is
// left as it is.
func (s *state) rewriteTableNameLiterals(f string) string {
	return tableNameLiteral.ReplaceAllStringFunc(f, func(m string) string {
		sub := tableNameLiteral.FindStringSubmatch(m)
		lit, before, after := sub[2], sub[1], ""
		if sub[1] == "" {
			lit, after = sub[3], sub[4]
		}
		if _, known := s.back[strings.ToLower(lit)]; !known {
			lit = s.prefixed(lit)
		}
		return before + "'" + lit + "'" + after
	})
}

// prefixed is a name with the replay's prefix, as table gives a recorded table name, for a
// literal that need not be a valid table name ("pytablet", "mytable{").
func (s *state) prefixed(lit string) string {
	if live, ok := s.tables[strings.ToLower(lit)]; ok {
		return live
	}
	if runTablePrefix.MatchString(lit) && len(s.prefix) == 10 {
		return s.prefix + lit[10:]
	}
	return s.prefix + lit
}

var datetimeLiteral = regexp.MustCompile(`(?i)datetime'([^']+)'`)

// rewriteTimes replaces, in a filter, every datetime literal that is a Timestamp the recorded
// service answered with the Timestamp the target gave the same entity.
func (s *state) rewriteTimes(f string) string {
	if len(s.times) == 0 {
		return f
	}
	return datetimeLiteral.ReplaceAllStringFunc(f, func(lit string) string {
		m := datetimeLiteral.FindStringSubmatch(lit)
		t, err := wire.ParseDateTime(m[1])
		if err != nil {
			return lit
		}
		live, ok := s.times[t.UnixNano()]
		if !ok {
			return lit
		}
		return "datetime'" + live.UTC().Format("2006-01-02T15:04:05.0000000Z") + "'"
	})
}

// rewriteBatch points each part's request line at the target and renames its table; ETags
// in the parts' If-Match headers are mapped to the live ones.
func (s *state) rewriteBatch(body []byte, endpoint string) []byte {
	out := batchRequestLine.ReplaceAllStringFunc(string(body), func(line string) string {
		m := batchRequestLine.FindStringSubmatch(line)
		raw := m[2]
		p, q := resourceOf(raw)
		if !strings.Contains(raw, "://") {
			p, q = strings.TrimPrefix(raw, "/"), url.Values{}
			if before, query, ok := strings.Cut(p, "?"); ok {
				p = before
				q, _ = url.ParseQuery(query)
			}
		}
		for _, k := range sasParams {
			q.Del(k)
		}
		u := endpoint + "/" + s.rewritePath(p)
		if enc := encodeQuery(q); enc != "" {
			u += "?" + enc
		}
		return m[1] + " " + u + " " + m[3]
	})
	ifMatch := regexp.MustCompile(`(?mi)^(If-Match: *)(.*?)(\r?)$`)
	out = ifMatch.ReplaceAllStringFunc(out, func(line string) string {
		m := ifMatch.FindStringSubmatch(line)
		return m[1] + s.etag(m[2]) + m[3]
	})
	return []byte(out)
}

func (s *state) etag(v string) string {
	if l, ok := s.etags[v]; ok {
		return l
	}
	return v
}

func (s *state) token(v string) string {
	if l, ok := s.tokens[v]; ok {
		return l
	}
	if _, ok := s.tables[strings.ToLower(v)]; ok {
		return s.table(v)
	}
	return v
}

// recordedTime is when an exchange was recorded (its answer's Date), or zero.
func recordedTime(x Exchange) time.Time {
	t, err := http.ParseTime(hget(x.ResponseHeader, "Date"))
	if err != nil {
		return time.Time{}
	}
	return t
}

// sasWindow moves a recorded SAS start and expiry to now, keeping their distance from the
// time of recording (so an expired SAS stays expired); without a recorded time the SAS is
// valid from 15 minutes ago for an hour.
func sasWindow(rec url.Values, recorded, now time.Time) (start, expiry time.Time) {
	start, expiry = now.Add(-15*time.Minute), now.Add(time.Hour)
	if recorded.IsZero() {
		return start, expiry
	}
	if t, err := parseSASParam(rec.Get("st")); err == nil {
		start = now.Add(t.Sub(recorded))
	} else if rec.Get("st") == "" {
		start = time.Time{}
	}
	if t, err := parseSASParam(rec.Get("se")); err == nil {
		expiry = now.Add(t.Sub(recorded))
	}
	return start, expiry
}

func parseSASParam(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a SAS time: %q", v)
}

// reissueSAS signs a SAS like the recorded one with the target's key, its validity moved to
// now (sasWindow). A recorded SAS whose permissions were sanitised away, or that names a
// stored access policy, cannot be reissued; the request is then signed with Shared Key
// instead (nil is returned).
func (r *Replayer) reissueSAS(st *state, rec url.Values, recorded time.Time) (url.Values, error) {
	if rec.Get("sig") == "" || rec.Get("sp") == "" || rec.Get("si") != "" {
		return nil, nil
	}
	now := r.now().UTC().Truncate(time.Second)
	start, expiry := sasWindow(rec, recorded, now)
	if tn := rec.Get("tn"); tn != "" {
		sas := wire.SAS{Table: st.table(tn), Permissions: rec.Get("sp"), Start: start, Expiry: expiry,
			StartPK: rec.Get("spk"), StartRK: rec.Get("srk"), EndPK: rec.Get("epk"), EndRK: rec.Get("erk"),
			Protocol: rec.Get("spr"), IPRange: rec.Get("sip")}
		q, err := sas.Encode(r.Target.Account, r.Target.Key)
		if err != nil {
			return nil, nil
		}
		return q, nil
	}
	if rec.Get("ss") != "" && rec.Get("srt") != "" {
		return accountSAS(r.Target.Account, r.Target.Key, rec, start, expiry), nil
	}
	return nil, nil
}

// accountSAS signs an account SAS with the recorded services, resource types and
// permissions (EVIDENCE.md 7, E-account-sas).
func accountSAS(account string, key []byte, rec url.Values, start, expiry time.Time) url.Values {
	sv := rec.Get("sv")
	if sv == "" {
		sv = "2019-02-02"
	}
	st, se := "", expiry.UTC().Format("2006-01-02T15:04:05Z")
	if !start.IsZero() {
		st = start.UTC().Format("2006-01-02T15:04:05Z")
	}
	fields := []string{account, rec.Get("sp"), rec.Get("ss"), rec.Get("srt"), st, se, "", rec.Get("spr"), sv}
	if sv >= "2020-12-06" {
		fields = append(fields, rec.Get("ses"))
	}
	q := url.Values{"sv": {sv}, "ss": {rec.Get("ss")}, "srt": {rec.Get("srt")}, "sp": {rec.Get("sp")}, "se": {se}}
	if st != "" {
		q.Set("st", st)
	}
	if rec.Get("spr") != "" {
		q.Set("spr", rec.Get("spr"))
	}
	q.Set("sig", wire.Sign(key, strings.Join(fields, "\n")+"\n"))
	return q
}

// learn pairs the ETags and continuation tokens of the recorded answer with the live ones.
func (s *state) learn(x Exchange, live answer) {
	if a, b := hget(x.ResponseHeader, "ETag"), hget(live.ResponseHeader, "ETag"); a != "" && b != "" {
		s.etags[a] = b
	}
	for _, h := range []string{wire.HeaderNextPartitionKey, wire.HeaderNextRowKey, wire.HeaderNextTableName} {
		if a, b := hget(x.ResponseHeader, h), hget(live.ResponseHeader, h); a != "" && b != "" {
			s.tokens[a] = b
		}
	}
	re, le := entitiesOf(x.ResponseHeader, x.ResponseBody), entitiesOf(live.ResponseHeader, live.ResponseBody)
	for i := 0; i < len(re) && i < len(le); i++ {
		if re[i].ETag != "" && le[i].ETag != "" {
			s.etags[re[i].ETag] = le[i].ETag
		}
		if !re[i].Timestamp.IsZero() && !le[i].Timestamp.IsZero() && re[i].PartitionKey == le[i].PartitionKey && re[i].RowKey == le[i].RowKey {
			s.times[re[i].Timestamp.UnixNano()] = le[i].Timestamp
		}
	}
	rb, errR := recordedBatchResponse(x)
	lb, errL := wire.ParseBatchResponse(hget(live.ResponseHeader, "Content-Type"), live.ResponseBody)
	if errR == nil && errL == nil {
		rp, lp := append(rb.Changeset, rb.Retrieves...), append(lb.Changeset, lb.Retrieves...)
		for i := 0; i < len(rp) && i < len(lp); i++ {
			if a, b := rp[i].Header.Get("ETag"), lp[i].Header.Get("ETag"); a != "" && b != "" {
				s.etags[a] = b
			}
		}
	}
}

// statusError is a setup request the target answered with an unexpected status.
type statusError struct {
	op     string
	status int
}

func (e statusError) Error() string { return fmt.Sprintf("%s answered %d", e.op, e.status) }

// createTable creates a table the recording uses without creating it.
func (r *Replayer) createTable(ctx context.Context, name string) error {
	status, err := r.postNoContent(ctx, "Tables", wire.EncodeTableRequest(name))
	if err != nil {
		return err
	}
	if status >= 300 && status != http.StatusConflict {
		return statusError{op: "Create Table", status: status}
	}
	return nil
}

// postNoContent sends body to the target's path (Create Table or Insert Entity) as JSON with
// Prefer: return-no-content, signed with Shared Key, and returns the answer's status.
func (r *Replayer) postNoContent(ctx context.Context, path string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(r.Target.Endpoint, "/")+"/"+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	r.headers(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "return-no-content")
	wire.SignRequest(req, wire.SharedKey, r.Target.Account, r.Target.Key, r.now())
	resp, err := r.client().Do(req)
	if err != nil {
		return 0, redactErr(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

func (r *Replayer) headers(req *http.Request) {
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
}

// cleanupAttempts bounds the deletes of one table at the end of a recording's replay;
// cleanupBudget bounds the whole cleanup of a recording, cleanupBudgetNoAnswer when one of
// its exchanges got no answer (the backend may have stopped answering).
const (
	cleanupAttempts       = 4
	cleanupBudget         = 30 * time.Second
	cleanupBudgetNoAnswer = 3 * time.Second
)

// cleanup deletes every table the replay of one recording may have created. A delete that
// gets no answer, or an answer that the service was busy or timed out, is sent again after
// a growing pause, as the SDKs retry: a lost answer must not leave a table behind.
func (r *Replayer) cleanup(st *state, budget time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	for _, live := range st.tables {
		pause := 100 * time.Millisecond
		for attempt := 1; attempt <= cleanupAttempts && ctx.Err() == nil; attempt++ {
			if !r.deleteTable(ctx, live) {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
			pause *= 2
		}
	}
}

// deleteTable sends one Delete Table and reports whether it is worth sending again: no
// answer came, or the answer was 408, 429, 500, 502, 503 or 504.
func (r *Replayer) deleteTable(ctx context.Context, live string) (again bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, strings.TrimSuffix(r.Target.Endpoint, "/")+"/Tables('"+live+"')", nil)
	if err != nil {
		return false
	}
	r.headers(req)
	wire.SignRequest(req, wire.SharedKey, r.Target.Account, r.Target.Key, r.now())
	resp, err := r.client().Do(req)
	if err != nil {
		return true
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// displayPath is a recorded URI without scheme, host and SAS, for reports.
func displayPath(raw string) string {
	p, q := resourceOf(raw)
	for _, k := range sasParams {
		q.Del(k)
	}
	if enc := encodeQuery(q); enc != "" {
		return "/" + p + "?" + enc
	}
	return "/" + p
}
