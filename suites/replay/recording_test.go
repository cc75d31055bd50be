package replay

import (
	"bytes"
	"strings"
	"testing"
)

const goVCRCassette = `---
version: 1
interactions:
- request:
    body: '{"TableName":"t1"}'
    form: {}
    headers:
      Content-Type:
      - application/json
    url: https://acct.table.core.windows.net/Tables
    method: POST
  response:
    body: '{"TableName":"t1"}'
    headers:
      Content-Type:
      - application/json;odata=minimalmetadata
    status: 201 Created
    code: 201
    duration: ""
`

const vcrpyCassette = `interactions:
- request:
    body: !!binary |
      eyJUYWJsZU5hbWUiOiAidDEifQ==
    headers:
      Content-Type:
      - application/json
    method: POST
    uri: https://acct.table.core.windows.net/Tables?sig=secret123&sv=2019-02-02
  response:
    body:
      string: !!python/unicode '{"TableName":"t1"}'
    headers:
      content-type:
      - application/json;odata=minimalmetadata
    status:
      code: 201
      message: Created
version: 1
`

func TestParseFormats(t *testing.T) {
	for _, tc := range []struct{ name, data, format string }{
		{"a.yaml", goVCRCassette, FormatGoVCR},
		{"b.yaml", vcrpyCassette, FormatVCRPy},
	} {
		rec, err := Parse(tc.name, []byte(tc.data))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if rec.Format != tc.format || len(rec.Entries) != 1 {
			t.Fatalf("%s: format %s, %d entries", tc.name, rec.Format, len(rec.Entries))
		}
		x := rec.Entries[0]
		if x.Method != "POST" || x.Status != 201 || !strings.Contains(string(x.RequestBody), `"t1"`) || !strings.Contains(string(x.ResponseBody), `"t1"`) {
			t.Fatalf("%s: %+v", tc.name, x)
		}
		out, err := WriteTestProxy(Trim(rec))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out, []byte("secret123")) {
			t.Fatalf("%s: the written recording keeps a SAS signature:\n%s", tc.name, out)
		}
		again, err := Parse("c.json", out)
		if err != nil || again.Format != FormatTestProxy || len(again.Entries) != 1 || again.Entries[0].Status != 201 {
			t.Fatalf("%s: written form does not read back: %v %+v", tc.name, err, again)
		}
	}
}

func TestParseRefusesBadInput(t *testing.T) {
	for name, data := range map[string]string{
		"empty":      "",
		"truncated":  `{"Entries":[{"RequestUri":"https://a.table.core.windows.net/Tables"`,
		"no entries": `{"recordings":[]}`,
		"yaml map":   "a: b\n",
		"no status":  `{"Entries":[{"RequestUri":"https://a/Tables","RequestMethod":"GET"}]}`,
		"bad header": `{"Entries":[{"RequestUri":"https://a/Tables","RequestMethod":"GET","StatusCode":200,"RequestHeaders":{"a":{}}}]}`,
		"binary":     "\x00\x01\x02",
	} {
		if _, err := Parse(name, []byte(data)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

func TestSanitize(t *testing.T) {
	x := Sanitize(Exchange{
		URI:           "https://a.table.core.windows.net/t?sv=2019&sig=abc%2Bdef&se=1",
		RequestHeader: map[string][]string{"Authorization": {"SharedKey a:c2lnbmF0dXJl"}},
		RequestBody:   []byte("POST https://a.table.core.windows.net/t?sig=xyz HTTP/1.1\r\nAccountKey=bXlrZXk=;"),
		ResponseBody:  []byte(`<Error><Code>AuthenticationFailed</Code><AuthenticationErrorDetail>The MAC signature found in the HTTP request 'bWFjc2lnbmF0dXJl' is not the same as any computed signature.</AuthenticationErrorDetail></Error>`),
	})
	all := x.URI + x.RequestHeader.Get("Authorization") + string(x.RequestBody) + string(x.ResponseBody)
	for _, secret := range []string{"abc%2Bdef", "c2lnbmF0dXJl", "xyz", "bXlrZXk=", "bWFjc2lnbmF0dXJl"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q survives sanitising: %s", secret, all)
		}
	}
}

func TestTableNamesKeepTheServicesVerdict(t *testing.T) {
	st := &state{prefix: "cfabcde001", tables: map[string]string{}, back: map[string]string{}}
	long := "a" + strings.Repeat("b", 62)
	for _, tc := range []struct{ recorded, want string }{
		{"1table", "1table"},                 // invalid: sent as recorded
		{"Tables", "Tables"},                 // reserved
		{"cfzzzzzzzzp1t3", "cfabcde001p1t3"}, // a run's prefix swapped
		{"myTable", "cfabcde001myTable"},
	} {
		if got := st.table(tc.recorded); got != tc.want {
			t.Errorf("table(%q) = %q, want %q", tc.recorded, got, tc.want)
		}
	}
	if got := st.table(long); len(got) != 63 || !strings.HasPrefix(got, "cfabcde001") {
		t.Errorf("a 63-character name became %q (%d)", got, len(got))
	}
}

// FuzzParse: no input makes Parse panic or hang, and what it reads writes back readable.
func FuzzParse(f *testing.F) {
	f.Add([]byte(goVCRCassette))
	f.Add([]byte(vcrpyCassette))
	f.Add([]byte(`{"Entries":[{"RequestUri":"https://a.table.core.windows.net/Tables","RequestMethod":"GET","RequestHeaders":{"Content-Type":"multipart/mixed"},"RequestBody":"LS0=","StatusCode":200,"ResponseHeaders":{"x":["a","b"]},"ResponseBody":{"value":[]}}],"Variables":{"a":"b"}}`))
	f.Add([]byte(`{"Entries":[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Parse("fuzz", data)
		if err != nil {
			return
		}
		out, err := WriteTestProxy(rec)
		if err != nil {
			t.Fatalf("write: %v", err)
		}
		again, err := Parse("fuzz.json", out)
		if err != nil || len(again.Entries) != len(rec.Entries) {
			t.Fatalf("written form does not read back (%v): %d vs %d entries", err, len(again.Entries), len(rec.Entries))
		}
	})
}

// The Go SDK's test-proxy recordings carry HTTP/2 pseudo-headers, and the proxy keeps a body
// that is text but not JSON as a list of lines (issue 20 #4, issue 21).
func TestParsePseudoHeadersAndBodyLines(t *testing.T) {
	const rec = `{"Entries":[{"RequestUri":"https://a.table.cosmos.azure.com/Tables","RequestMethod":"POST",
"RequestHeaders":{":method":"POST",":path":"/Tables",":authority":"a.table.cosmos.azure.com",":scheme":"https","Accept":"application/json"},
"RequestBody":{"TableName":"t1"},"StatusCode":429,
"ResponseHeaders":{"Content-Type":"application/json","x-ms-retry-after-ms":"10"},
"ResponseBody":["Message: {\"Errors\":[\"Request rate is large\"]}","ActivityId: 1, Request URI: /apps/x"]}],"Variables":{}}`
	r, err := Parse("go.json", []byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	x := r.Entries[0]
	for k := range x.RequestHeader {
		if strings.HasPrefix(k, ":") {
			t.Errorf("pseudo-header %s kept", k)
		}
	}
	if x.RequestHeader.Get("Accept") != "application/json" {
		t.Errorf("headers %v", x.RequestHeader)
	}
	if want := "Message: {\"Errors\":[\"Request rate is large\"]}\nActivityId: 1, Request URI: /apps/x"; string(x.ResponseBody) != want {
		t.Errorf("body %q, want the lines joined", x.ResponseBody)
	}
}

// Table names compared with TableName in a Query Tables filter get the replay's prefix, as
// the recording's tables do, on both profiles.
func TestFilterTableNamesGetThePrefix(t *testing.T) {
	st := &state{prefix: "cfreplay01", tables: map[string]string{}, back: map[string]string{}}
	st.table("pytablesync1")
	for _, tc := range []struct{ in, want string }{
		{"TableName ge 'pytables' and TableName lt 'pytablet'", "TableName ge 'cfreplay01pytables' and TableName lt 'cfreplay01pytablet'"},
		{"TableName eq 'cfreplay01pytablesync1'", "TableName eq 'cfreplay01pytablesync1'"},
		{"'mytable' le TableName", "'cfreplay01mytable' le TableName"},
		{"Name eq 'x'", "Name eq 'x'"},
	} {
		if got := st.rewriteTableNameLiterals(tc.in); got != tc.want {
			t.Errorf("%s -> %s, want %s", tc.in, got, tc.want)
		}
	}
}
