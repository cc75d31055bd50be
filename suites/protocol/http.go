package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/suites/driver"
)

// The JSON metadata levels (EVIDENCE.md 6).
const (
	noMetadata      = "application/json;odata=nometadata"
	minimalMetadata = "application/json;odata=minimalmetadata"
	fullMetadata    = "application/json;odata=fullmetadata"
)

// maxBody bounds what a spec reads of an answer.
const maxBody = 1 << 20

// answer is one HTTP response, read whole.
type answer struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
}

func (a answer) String() string {
	body := string(a.body)
	if len(body) > 300 {
		body = body[:300] + "..."
	}
	return fmt.Sprintf("%s %s answered %d (x-ms-error-code %q) %s", a.method, a.path, a.status, a.header.Get("x-ms-error-code"), body)
}

// errorCode is the error code of an answer as the SDKs read it: the x-ms-error-code header,
// or the code of the odata.error body where there is no header (Cosmos DB for Table sends
// none, E-cosmos-headers; rule protocol.error.code-header judges the header itself).
func (a answer) errorCode() string {
	if c := a.header.Get("x-ms-error-code"); c != "" {
		return c
	}
	var doc struct {
		Error struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	_ = json.Unmarshal(a.body, &doc)
	return doc.Error.Code
}

// send makes one request through raw: headers are set after the driver's defaults, an
// empty value removes the header.
func send(ctx context.Context, raw driver.RawHTTP, method, path string, body []byte, headers map[string]string) answer {
	GinkgoHelper()
	req, err := raw.NewRequest(ctx, method, path, body)
	Expect(err).NotTo(HaveOccurred(), "building %s %s", method, path)
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", minimalMetadata)
	}
	resp, err := raw.Do(req)
	Expect(err).NotTo(HaveOccurred(), "conform:transport: %s %s", method, path)
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	Expect(err).NotTo(HaveOccurred(), "conform:transport: reading the answer to %s %s", method, path)
	return answer{method: method, path: path, status: resp.StatusCode, header: resp.Header, body: data}
}

// entityPath is the URL path of one entity (keys must not need quoting).
func entityPath(table, pk, rk string) string {
	return fmt.Sprintf("%s(PartitionKey='%s',RowKey='%s')", table, pk, rk)
}

// queryPath is the URL of a query of table with the given options.
func queryPath(table string, options map[string]string) string {
	v := url.Values{}
	for k, o := range options {
		v.Set(k, o)
	}
	q := strings.ReplaceAll(v.Encode(), "+", "%20")
	if q == "" {
		return table + "()"
	}
	return table + "()?" + q
}

// body renders a JSON object with the keys and members given as name/value pairs.
func body(pk, rk string, kv ...any) []byte {
	GinkgoHelper()
	m := map[string]any{"PartitionKey": pk, "RowKey": rk}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	data, err := json.Marshal(m)
	Expect(err).NotTo(HaveOccurred())
	return data
}

// object decodes a JSON object keeping numbers as written.
func object(a answer) map[string]any {
	GinkgoHelper()
	dec := json.NewDecoder(bytes.NewReader(a.body))
	dec.UseNumber()
	var m map[string]any
	Expect(dec.Decode(&m)).To(Succeed(), "the answer is not a JSON object: %s", a)
	return m
}

// values decodes a query answer's "value" array.
func values(a answer) []map[string]any {
	GinkgoHelper()
	m := object(a)
	arr, ok := m["value"].([]any)
	Expect(ok).To(BeTrue(), "the query answer has no value array: %s", a)
	out := make([]map[string]any, len(arr))
	for i, v := range arr {
		e, ok := v.(map[string]any)
		Expect(ok).To(BeTrue(), "value[%d] is not an object: %s", i, a)
		out[i] = e
	}
	return out
}

// odataMembers returns the odata.* members and @odata.* annotations of an object.
func odataMembers(m map[string]any) []string {
	var out []string
	for k := range m {
		if strings.HasPrefix(k, "odata.") || strings.Contains(k, "@odata.") {
			out = append(out, k)
		}
	}
	return out
}
