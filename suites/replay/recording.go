package replay

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Formats a recording can be read from.
const (
	FormatTestProxy = "test-proxy"
	FormatVCRPy     = "vcrpy"
	FormatGoVCR     = "go-vcr"
)

// MaxRecordingBytes bounds the size of a recording file Parse accepts.
const MaxRecordingBytes = 16 << 20

// Exchange is one recorded request and its answer.
type Exchange struct {
	Method         string
	URI            string
	RequestHeader  http.Header
	RequestBody    []byte
	Status         int
	ResponseHeader http.Header
	ResponseBody   []byte
}

// Recording is the exchanges of one test, in the order they were sent.
type Recording struct {
	// Name is the file's base name without extension.
	Name string
	// Format is the format the recording was read from.
	Format string
	// Entries are the exchanges.
	Entries []Exchange
	// Variables are the test proxy's recorded variables (kept when converting).
	Variables map[string]string
}

// ErrUnknownFormat is returned by Parse for data in none of the known formats.
var ErrUnknownFormat = errors.New("not a test-proxy recording, vcrpy cassette or go-vcr cassette")

// Parse reads a recording in any known format; name is the file name (its extension is a
// hint only). A truncated or malformed file is an error, never a panic.
func Parse(name string, data []byte) (rec Recording, err error) {
	defer func() {
		if r := recover(); r != nil {
			rec, err = Recording{}, fmt.Errorf("unreadable recording: %v", r)
		}
	}()
	if len(data) > MaxRecordingBytes {
		return Recording{}, fmt.Errorf("recording is larger than %d bytes", MaxRecordingBytes)
	}
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 {
		return Recording{}, errors.New("empty file")
	}
	if trimmed[0] == '{' {
		rec, err = parseTestProxy(trimmed)
	} else {
		rec, err = parseCassette(trimmed)
	}
	if err != nil {
		return Recording{}, err
	}
	rec.Name = base
	if len(rec.Entries) == 0 {
		return Recording{}, errors.New("recording holds no exchanges")
	}
	return rec, nil
}

type testProxyFile struct {
	Entries   *[]testProxyEntry `json:"Entries"`
	Variables map[string]any    `json:"Variables"`
}

type testProxyEntry struct {
	RequestURI      string                     `json:"RequestUri"`
	RequestMethod   string                     `json:"RequestMethod"`
	RequestHeaders  map[string]json.RawMessage `json:"RequestHeaders"`
	RequestBody     json.RawMessage            `json:"RequestBody"`
	StatusCode      int                        `json:"StatusCode"`
	ResponseHeaders map[string]json.RawMessage `json:"ResponseHeaders"`
	ResponseBody    json.RawMessage            `json:"ResponseBody"`
}

func parseTestProxy(data []byte) (Recording, error) {
	var f testProxyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Recording{}, fmt.Errorf("test-proxy JSON: %w", err)
	}
	if f.Entries == nil {
		return Recording{}, ErrUnknownFormat
	}
	rec := Recording{Format: FormatTestProxy, Variables: map[string]string{}}
	for k, v := range f.Variables {
		rec.Variables[k] = fmt.Sprint(v)
	}
	for i, e := range *f.Entries {
		if e.RequestMethod == "" || e.RequestURI == "" || e.StatusCode < 100 || e.StatusCode > 999 {
			return Recording{}, fmt.Errorf("entry %d: no method, URI or status", i)
		}
		x := Exchange{Method: strings.ToUpper(e.RequestMethod), URI: e.RequestURI, Status: e.StatusCode}
		var err error
		if x.RequestHeader, err = proxyHeaders(e.RequestHeaders); err != nil {
			return Recording{}, fmt.Errorf("entry %d request headers: %w", i, err)
		}
		if x.ResponseHeader, err = proxyHeaders(e.ResponseHeaders); err != nil {
			return Recording{}, fmt.Errorf("entry %d response headers: %w", i, err)
		}
		if x.RequestBody, err = proxyBody(e.RequestBody, hget(x.RequestHeader, "Content-Type")); err != nil {
			return Recording{}, fmt.Errorf("entry %d request body: %w", i, err)
		}
		if x.ResponseBody, err = proxyBody(e.ResponseBody, hget(x.ResponseHeader, "Content-Type")); err != nil {
			return Recording{}, fmt.Errorf("entry %d response body: %w", i, err)
		}
		rec.Entries = append(rec.Entries, x)
	}
	return rec, nil
}

// proxyHeaders reads the test proxy's headers: a string or an array of strings each. HTTP/2
// pseudo-headers (":method", ":path", ":authority", ":scheme", as the Go SDK's recordings
// carry them) repeat the request line and are left out: no HTTP/1.1 header may be named so.
func proxyHeaders(m map[string]json.RawMessage) (http.Header, error) {
	h := http.Header{}
	for k, raw := range m {
		if strings.HasPrefix(k, ":") {
			continue
		}
		var one string
		if err := json.Unmarshal(raw, &one); err == nil {
			h[k] = append(h[k], one)
			continue
		}
		var many []string
		if err := json.Unmarshal(raw, &many); err != nil {
			return nil, fmt.Errorf("header %s is neither a string nor a list of strings", k)
		}
		h[k] = append(h[k], many...)
	}
	return h, nil
}

// proxyBody reads a test proxy body: null, a JSON document (kept as JSON), a list of strings
// (the lines of a text body the proxy could not keep as JSON, such as an error whose text
// is not JSON; joined with "\n"), or a string that is the text of a textual body or the
// base64 of any other.
func proxyBody(raw json.RawMessage, contentType string) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '[' {
		var lines []string
		if err := json.Unmarshal(raw, &lines); err == nil {
			return []byte(strings.Join(lines, "\n")), nil
		}
	}
	if raw[0] != '"' {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if !isTextual(contentType) {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return []byte(s), nil
}

// isTextual reports whether the test proxy stores a body of this content type as text
// (JSON, XML and text types) rather than base64.
func isTextual(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	switch {
	case mt == "":
		return true
	case strings.HasPrefix(mt, "text/"), strings.Contains(mt, "json"), strings.Contains(mt, "xml"):
		return true
	}
	return false
}

// cassette is a vcrpy or go-vcr YAML file.
type cassette struct {
	Version      any `yaml:"version"`
	Interactions *[]struct {
		Request struct {
			Body    yaml.Node           `yaml:"body"`
			Headers map[string]yamlList `yaml:"headers"`
			Method  string              `yaml:"method"`
			URI     string              `yaml:"uri"`
			URL     string              `yaml:"url"`
		} `yaml:"request"`
		Response struct {
			Body    yaml.Node           `yaml:"body"`
			Headers map[string]yamlList `yaml:"headers"`
			Status  any                 `yaml:"status"`
			Code    int                 `yaml:"code"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

// yamlList is a header value: vcrpy and go-vcr write lists, hand-written files strings.
type yamlList []string

func (l *yamlList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = []string{n.Value}
		return nil
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return errors.New("header value is not a string")
			}
			out = append(out, c.Value)
		}
		*l = out
		return nil
	}
	return errors.New("header value is not a string or a list")
}

func parseCassette(data []byte) (Recording, error) {
	var c cassette
	if err := yaml.Unmarshal(data, &c); err != nil {
		return Recording{}, fmt.Errorf("YAML cassette: %s", firstLine(err.Error()))
	}
	if c.Interactions == nil {
		return Recording{}, ErrUnknownFormat
	}
	rec := Recording{Format: FormatVCRPy}
	for i, it := range *c.Interactions {
		x := Exchange{Method: strings.ToUpper(it.Request.Method), URI: it.Request.URI}
		if x.URI == "" {
			x.URI, rec.Format = it.Request.URL, FormatGoVCR
		}
		x.RequestHeader, x.ResponseHeader = yamlHeaders(it.Request.Headers), yamlHeaders(it.Response.Headers)
		x.RequestBody = yamlBody(&it.Request.Body)
		x.ResponseBody = yamlBody(&it.Response.Body)
		switch s := it.Response.Status.(type) {
		case map[string]any:
			x.Status = anyInt(s["code"])
		case string:
			code, _, _ := strings.Cut(s, " ")
			x.Status, _ = strconv.Atoi(code)
		case int:
			x.Status = s
		}
		if it.Response.Code != 0 {
			x.Status = it.Response.Code
		}
		if x.Method == "" || x.URI == "" || x.Status < 100 || x.Status > 999 {
			return Recording{}, fmt.Errorf("interaction %d: no method, URI or status", i)
		}
		rec.Entries = append(rec.Entries, x)
	}
	return rec, nil
}

func yamlHeaders(m map[string]yamlList) http.Header {
	h := http.Header{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h[k] = append(h[k], m[k]...)
	}
	return h
}

// yamlBody reads a cassette body: a string (whatever its tag: vcrpy under Python 2 wrote
// !!python/unicode), !!binary, null, or vcrpy's {string: ...} map.
func yamlBody(n *yaml.Node) []byte {
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil
		case "!!binary":
			if b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(n.Value), "")); err == nil {
				return b
			}
		}
		if n.Value == "" {
			return nil
		}
		return []byte(n.Value)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "string" {
				return yamlBody(n.Content[i+1])
			}
		}
	}
	return nil
}

func anyInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	case string:
		i, _ := strconv.Atoi(n)
		return i
	}
	return 0
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// WriteTestProxy renders rec in the test proxy's format. JSON bodies are written as JSON,
// other textual bodies as strings, and the rest (multipart batches) as base64, as the test
// proxy does.
func WriteTestProxy(rec Recording) ([]byte, error) {
	type entry struct {
		RequestURI      string         `json:"RequestUri"`
		RequestMethod   string         `json:"RequestMethod"`
		RequestHeaders  map[string]any `json:"RequestHeaders"`
		RequestBody     any            `json:"RequestBody"`
		StatusCode      int            `json:"StatusCode"`
		ResponseHeaders map[string]any `json:"ResponseHeaders"`
		ResponseBody    any            `json:"ResponseBody"`
	}
	out := struct {
		Entries   []entry           `json:"Entries"`
		Variables map[string]string `json:"Variables"`
	}{Entries: []entry{}, Variables: rec.Variables}
	if out.Variables == nil {
		out.Variables = map[string]string{}
	}
	for _, x := range rec.Entries {
		out.Entries = append(out.Entries, entry{
			RequestURI: x.URI, RequestMethod: x.Method,
			RequestHeaders: headerMap(x.RequestHeader), RequestBody: bodyValue(x.RequestBody, hget(x.RequestHeader, "Content-Type")),
			StatusCode:      x.Status,
			ResponseHeaders: headerMap(x.ResponseHeader), ResponseBody: bodyValue(x.ResponseBody, hget(x.ResponseHeader, "Content-Type")),
		})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func headerMap(h http.Header) map[string]any {
	m := map[string]any{}
	for k, vs := range h {
		if len(vs) == 1 {
			m[k] = vs[0]
		} else {
			m[k] = vs
		}
	}
	return m
}

func bodyValue(b []byte, contentType string) any {
	if len(b) == 0 {
		return nil
	}
	if isTextual(contentType) && utf8.Valid(b) {
		trimmed := bytes.TrimSpace(b)
		if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
			return json.RawMessage(trimmed)
		}
		return string(b)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// keptHeaders are the headers Trim keeps: what a replay sends or compares.
var keptHeaders = map[string]bool{
	"accept": true, "content-type": true, "dataserviceversion": true, "maxdataserviceversion": true,
	"x-ms-version": true, "prefer": true, "if-match": true, "if-none-match": true, "x-http-method": true,
	"etag": true, "location": true, "preference-applied": true, "x-ms-error-code": true,
	"x-ms-continuation-nextpartitionkey": true, "x-ms-continuation-nextrowkey": true,
	"x-ms-continuation-nexttablename": true, "authorization": true, "date": true,
}

// Trim returns rec with only the headers a replay uses, its credentials sanitised: the form
// of the committed corpus.
func Trim(rec Recording) Recording {
	out := rec
	out.Entries = make([]Exchange, len(rec.Entries))
	for i, x := range rec.Entries {
		x.RequestHeader, x.ResponseHeader = keepHeaders(x.RequestHeader), keepHeaders(x.ResponseHeader)
		out.Entries[i] = Sanitize(x)
	}
	return out
}

func keepHeaders(h http.Header) http.Header {
	out := http.Header{}
	for k, vs := range h {
		if keptHeaders[strings.ToLower(k)] {
			out[k] = vs
		}
	}
	return out
}

// hget returns the first value of a header whatever the case of its recorded name.
func hget(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}
