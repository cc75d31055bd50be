package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

func (r *Replayer) headers(req *http.Request) {
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
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
