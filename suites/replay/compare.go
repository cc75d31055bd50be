package replay

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/wire"
)

// Outcomes of one exchange.
const (
	OutcomeAgree    = "agree"
	OutcomeDisagree = "disagree"
	OutcomeSkipped  = "skipped"
)

// Answer is what a report shows of one answer.
type Answer struct {
	Status int    `json:"status"`
	Code   string `json:"code,omitempty"`
	// Summary lists the entities (keys and properties), tables or batch parts, one a line.
	Summary []string `json:"summary,omitempty"`
	// Continuation names the continuation headers the answer carried.
	Continuation []string `json:"continuation,omitempty"`
}

// ExchangeResult is the outcome of one recorded exchange.
type ExchangeResult struct {
	Index       int      `json:"index"`
	Method      string   `json:"method"`
	Path        string   `json:"path"`
	Outcome     string   `json:"outcome"`
	Reason      string   `json:"reason,omitempty"`
	Differences []string `json:"differences,omitempty"`
	Recorded    *Answer  `json:"recorded,omitempty"`
	Live        *Answer  `json:"live,omitempty"`
}

// RecordingResult is the outcome of one recording.
type RecordingResult struct {
	File      string           `json:"file"`
	Name      string           `json:"name"`
	Format    string           `json:"format,omitempty"`
	Skipped   string           `json:"skipped,omitempty"`
	Exchanges []ExchangeResult `json:"exchanges,omitempty"`
	// NoAnswer is set when a request got no answer (a transport error or timeout).
	NoAnswer bool `json:"noAnswer,omitempty"`
}

// compare lists how the live answer differs from the recorded one in what a client relies on.
func compare(st *state, x Exchange, live answer) []string {
	var diffs []string
	if x.Status != live.Status {
		diffs = append(diffs, fmt.Sprintf("status: recorded %d, live %d", x.Status, live.Status))
	}
	rc, lc := errorCode(x.Status, x.ResponseHeader, x.ResponseBody), errorCode(live.Status, live.ResponseHeader, live.ResponseBody)
	if rc != lc && x.Status >= 400 && live.Status >= 400 {
		diffs = append(diffs, fmt.Sprintf("error code: recorded %s, live %s", orNone(rc), orNone(lc)))
	}
	if st.strict && x.Status >= 400 && live.Status >= 400 {
		rm, lm := errorFirstLine(x.Status, x.ResponseHeader, x.ResponseBody), errorFirstLine(live.Status, live.ResponseHeader, live.ResponseBody)
		if rm != lm {
			diffs = append(diffs, fmt.Sprintf("error message: recorded %q, live %q", rm, lm))
		}
	}
	if x.Status >= 300 || live.Status >= 300 {
		return diffs
	}
	diffs = append(diffs, compareHeaders(x, live)...)
	for _, h := range []string{wire.HeaderNextPartitionKey, wire.HeaderNextTableName} {
		if h == wire.HeaderNextTableName && st.foreignTable(hget(x.ResponseHeader, h)) {
			continue // the recorded account held other tables after the recording's own
		}
		if a, b := hget(x.ResponseHeader, h) != "", hget(live.ResponseHeader, h) != ""; a != b {
			diffs = append(diffs, fmt.Sprintf("continuation header %s: recorded %s, live %s", h, presence(a), presence(b)))
		}
	}
	rct := hget(x.ResponseHeader, "Content-Type")
	switch {
	case strings.Contains(rct, "multipart/mixed"):
		diffs = append(diffs, compareBatch(x, live)...)
	case strings.Contains(rct, "json"):
		diffs = append(diffs, compareJSON(st, x, live)...)
	case strings.Contains(rct, "xml") && strings.Contains(x.URI, "comp=acl"):
		if a, b := aclSummary(x.ResponseBody), aclSummary(live.ResponseBody); strings.Join(a, "\n") != strings.Join(b, "\n") {
			diffs = append(diffs, fmt.Sprintf("access policies: recorded %v, live %v", a, b))
		}
	}
	return diffs
}

// compareHeaders compares the headers of a successful answer that the SDKs read: whether an
// ETag came back (a client keeps it for If-Match), which Prefer choice was applied (it
// decides whether a body came back), and the media type and OData metadata level of a JSON
// answer (it decides how the body is read). The ETag's value names one write and is not
// compared; neither is Location, which no SDK reads (rule protocol.insert.location, a
// SHOULD, judges it).
func compareHeaders(x Exchange, live answer) []string {
	var diffs []string
	if a, b := hget(x.ResponseHeader, "ETag") != "", hget(live.ResponseHeader, "ETag") != ""; a != b {
		diffs = append(diffs, fmt.Sprintf("header ETag: recorded %s, live %s", presence(a), presence(b)))
	}
	if a := hget(x.ResponseHeader, "Preference-Applied"); a != "" {
		if b := hget(live.ResponseHeader, "Preference-Applied"); !strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b)) {
			diffs = append(diffs, fmt.Sprintf("header Preference-Applied: recorded %q, live %q", a, b))
		}
	}
	if a := jsonContentType(hget(x.ResponseHeader, "Content-Type")); a != "" {
		if b := jsonContentType(hget(live.ResponseHeader, "Content-Type")); a != b {
			diffs = append(diffs, fmt.Sprintf("Content-Type: recorded %s, live %s", a, orNone(b)))
		}
	}
	return diffs
}

// jsonContentType renders a JSON answer's media type with its odata parameter (the metadata
// level), or "" for any other answer; other parameters (streaming, charset) are left out.
func jsonContentType(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return ""
	}
	if level := strings.ToLower(params["odata"]); level != "" {
		return mt + ";odata=" + level
	}
	return mt
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func presence(b bool) string {
	if b {
		return "present"
	}
	return "absent"
}

func errorCode(status int, h http.Header, body []byte) string {
	if status < 400 {
		return ""
	}
	canonical := http.Header{}
	for k, vs := range h {
		for _, v := range vs {
			canonical.Add(k, v)
		}
	}
	if e := wire.DecodeError(status, canonical, body); e != nil {
		return e.Code
	}
	return ""
}

// errorFirstLine is the first line of an error answer's message, "" when it has none.
func errorFirstLine(status int, h http.Header, body []byte) string {
	canonical := http.Header{}
	for k, vs := range h {
		for _, v := range vs {
			canonical.Add(k, v)
		}
	}
	e := wire.DecodeError(status, canonical, body)
	if e == nil {
		return ""
	}
	first, _, _ := strings.Cut(e.Message, "\n")
	return strings.TrimSuffix(first, "\r")
}

// bodyKind tells what a JSON answer holds.
func bodyKind(body []byte) (kind string) {
	var probe map[string]json.RawMessage
	if json.Unmarshal(body, &probe) != nil {
		return ""
	}
	if v, ok := probe["value"]; ok {
		var items []map[string]json.RawMessage
		if json.Unmarshal(v, &items) == nil && len(items) > 0 {
			if _, ok := items[0]["TableName"]; ok {
				return "tables"
			}
		}
		return "entities"
	}
	if _, ok := probe["TableName"]; ok {
		return "table"
	}
	if _, ok := probe["PartitionKey"]; ok {
		return "entity"
	}
	return ""
}

func entitiesOf(h http.Header, body []byte) []api.Entity {
	if !strings.Contains(hget(h, "Content-Type"), "json") {
		return nil
	}
	switch bodyKind(body) {
	case "entities":
		es, err := wire.DecodeEntitySet(body)
		if err == nil {
			return es
		}
	case "entity":
		e, err := wire.DecodeEntity(body)
		if err == nil {
			return []api.Entity{e}
		}
	}
	return nil
}

// tablesOf lists the table names of a Query Tables answer that belong to this replay, by
// their recorded names; live names are mapped back.
func tablesOf(st *state, body []byte, live bool) []string {
	names, err := wire.DecodeTableSet(body)
	if err != nil {
		if n, err := wire.DecodeTableName(body); err == nil {
			names = []string{n}
		}
	}
	var out []string
	for _, n := range names {
		if live {
			if r, ok := st.recordedName(n); ok {
				out = append(out, r)
			}
		} else if _, ok := st.tables[strings.ToLower(n)]; ok {
			out = append(out, n)
		}
	}
	return out
}

func compareJSON(st *state, x Exchange, live answer) []string {
	rk, lk := bodyKind(x.ResponseBody), bodyKind(live.ResponseBody)
	if rk == "" {
		return nil
	}
	if rk == "entities" && lk == "" && len(live.ResponseBody) > 0 {
		lk = "entities"
	}
	if rk != lk && !(rk == "entities" && lk == "tables") && !(rk == "tables" && lk == "entities") {
		return []string{fmt.Sprintf("answer body: recorded %s, live %s", rk, orNone(lk))}
	}
	switch rk {
	case "tables", "table":
		a, b := tablesOf(st, x.ResponseBody, false), tablesOf(st, live.ResponseBody, true)
		if st.unordered {
			a, b = sortedFold(a), sortedFold(b)
		}
		if strings.EqualFold(strings.Join(a, ","), strings.Join(b, ",")) {
			return nil
		}
		return []string{fmt.Sprintf("tables: recorded %v, live %v", a, b)}
	}
	re, le := entitiesOf(x.ResponseHeader, x.ResponseBody), entitiesOf(live.ResponseHeader, live.ResponseBody)
	var diffs []string
	if len(re) != len(le) {
		diffs = append(diffs, fmt.Sprintf("entity count: recorded %d, live %d", len(re), len(le)))
	}
	if a, b := keyList(re), keyList(le); len(re) == len(le) && a != b {
		sortedA, sortedB := sortedKeys(re), sortedKeys(le)
		switch {
		case sortedA == sortedB && st.unordered && !st.strict:
			// The recorded service promises no order (E-cosmos-order).
		case sortedA == sortedB:
			diffs = append(diffs, fmt.Sprintf("entity order: recorded %s, live %s", a, b))
		default:
			diffs = append(diffs, fmt.Sprintf("entities: recorded %s, live %s", a, b))
		}
	}
	if len(re) == len(le) && keyList(re) == keyList(le) {
		// Same keys in the same order (also when $select left the keys out): pair by position.
		for i := range re {
			diffs = append(diffs, compareProperties(re[i], le[i])...)
		}
		return diffs
	}
	byKey := map[string]api.Entity{}
	for _, e := range le {
		byKey[e.PartitionKey+"\x00"+e.RowKey] = e
	}
	for _, e := range re {
		l, ok := byKey[e.PartitionKey+"\x00"+e.RowKey]
		if !ok {
			continue
		}
		diffs = append(diffs, compareProperties(e, l)...)
	}
	return diffs
}

// sortedFold returns names sorted without regard to case.
func sortedFold(names []string) []string {
	out := append([]string(nil), names...)
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i]) < strings.ToLower(out[j]) })
	return out
}

func keyList(es []api.Entity) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, fmt.Sprintf("(%q,%q)", e.PartitionKey, e.RowKey))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func sortedKeys(es []api.Entity) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, fmt.Sprintf("(%q,%q)", e.PartitionKey, e.RowKey))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// compareProperties compares the custom properties of one entity: names, types and values.
func compareProperties(rec, live api.Entity) []string {
	var diffs []string
	for _, n := range api.UnionPropertyNames(rec, live) {
		a, okA := rec.Properties[n]
		b, okB := live.Properties[n]
		where := fmt.Sprintf("entity (%q,%q) property %s", rec.PartitionKey, rec.RowKey, n)
		switch {
		case !okA:
			diffs = append(diffs, fmt.Sprintf("%s: recorded absent, live %s", where, describe(b)))
		case !okB:
			diffs = append(diffs, fmt.Sprintf("%s: recorded %s, live absent", where, describe(a)))
		case !a.Equal(b):
			diffs = append(diffs, fmt.Sprintf("%s: recorded %s, live %s", where, describe(a), describe(b)))
		}
	}
	return diffs
}

func describe(v api.Value) string { return v.Type.String() + " " + v.String() }

func compareBatch(x Exchange, live answer) []string {
	rb, err := recordedBatchResponse(x)
	if err != nil {
		return nil // a recorded answer conform cannot read says nothing about the target
	}
	lb, err := wire.ParseBatchResponse(hget(live.ResponseHeader, "Content-Type"), live.ResponseBody)
	if err != nil {
		return []string{"batch answer: the live answer is not a readable multipart answer: " + firstLine(err.Error())}
	}
	rp, lp := append(rb.Changeset, rb.Retrieves...), append(lb.Changeset, lb.Retrieves...)
	var diffs []string
	if len(rp) != len(lp) {
		diffs = append(diffs, fmt.Sprintf("batch parts: recorded %d, live %d", len(rp), len(lp)))
	}
	for i := 0; i < len(rp) && i < len(lp); i++ {
		if rp[i].Status != lp[i].Status {
			diffs = append(diffs, fmt.Sprintf("batch part %d status: recorded %d, live %d", i, rp[i].Status, lp[i].Status))
			continue
		}
		a, b := partCode(rp[i]), partCode(lp[i])
		if a != b {
			diffs = append(diffs, fmt.Sprintf("batch part %d error code: recorded %s, live %s", i, orNone(a), orNone(b)))
		}
	}
	return diffs
}

func partCode(p wire.ResponsePart) string {
	if p.Status < 400 {
		return ""
	}
	h := http.Header{}
	for _, f := range p.Header {
		h.Add(f.Name, f.Value)
	}
	return errorCode(p.Status, h, p.Body)
}

// aclSummary renders a Get Table ACL answer: each identifier with its times as instants.
func aclSummary(body []byte) []string {
	s, err := wire.DecodeACL(body)
	if err != nil {
		return []string{"(unreadable)"}
	}
	out := []string{}
	for _, id := range s.Identifiers {
		line := id.ID
		if p := id.Policy; p != nil && (p.Start != "" || p.Expiry != "" || p.Permission != "") {
			line += " start=" + instant(p.Start) + " expiry=" + instant(p.Expiry) + " permission=" + p.Permission
		}
		out = append(out, line)
	}
	return out
}

func instant(s string) string {
	if s == "" {
		return ""
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC().Format(time.RFC3339Nano)
	}
	return s
}

// summarize renders an answer for the report.
func summarize(st *state, status int, h http.Header, body []byte, live bool) *Answer {
	a := &Answer{Status: status, Code: errorCode(status, h, body)}
	for _, k := range []string{wire.HeaderNextPartitionKey, wire.HeaderNextRowKey, wire.HeaderNextTableName} {
		if hget(h, k) != "" {
			a.Continuation = append(a.Continuation, k)
		}
	}
	ct := hget(h, "Content-Type")
	switch {
	case status >= 300:
	case strings.Contains(ct, "multipart/mixed"):
		if br, err := wire.ParseBatchResponse(batchContentType(ct, body), body); err == nil {
			for i, p := range append(br.Changeset, br.Retrieves...) {
				line := fmt.Sprintf("part %d: %d", i, p.Status)
				if c := partCode(p); c != "" {
					line += " " + c
				}
				a.Summary = append(a.Summary, line)
			}
		}
	case strings.Contains(ct, "json"):
		switch bodyKind(body) {
		case "tables", "table":
			a.Summary = append(a.Summary, "tables "+strings.Join(tablesOf(st, body, live), ", "))
		default:
			for _, e := range entitiesOf(h, body) {
				a.Summary = append(a.Summary, entityLine(e))
			}
		}
	case strings.Contains(ct, "xml"):
		a.Summary = aclSummary(body)
	}
	const maxLines = 20
	if len(a.Summary) > maxLines {
		a.Summary = append(a.Summary[:maxLines], fmt.Sprintf("… %d more", len(a.Summary)-maxLines))
	}
	return a
}

func entityLine(e api.Entity) string {
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "(%q,%q)", e.PartitionKey, e.RowKey)
	for _, n := range names {
		fmt.Fprintf(&b, " %s=%s", n, describe(e.Properties[n]))
	}
	return b.String()
}

// foreignTable reports whether a recorded NextTableName token names a table the recording
// never uses: Storage's tokens are "1!<length>!<base64 of the name, 0x01, ...>", and such a
// continuation says only that the recorded account was shared.
func (s *state) foreignTable(token string) bool {
	parts := strings.SplitN(token, "!", 3)
	if len(parts) != 3 {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(parts[2], "-", "="))
	if err != nil {
		return false
	}
	name, _, ok := strings.Cut(string(raw), "\x01")
	if !ok {
		return false
	}
	_, known := s.tables[strings.ToLower(name)]
	return !known
}
