package tableserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/tableserver"
)

// sendAnonymous sends one request to an anonymous server and returns the answer, its body read.
func sendAnonymous(t *testing.T, base, method, path string, headers map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+"/"+tableserver.DevAccountName+path, strings.NewReader(body))
	req.Header.Set("x-ms-version", "2019-02-02")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

// TestXMLErrorFormPerOperation: Table ACL errors are the m: prefixed OData form recorded
// from Storage (E-acl-error-xml), and so are those of the account's other XML resources;
// entity operations answered in XML keep the unprefixed form (EVIDENCE.md 5.1).
func TestXMLErrorFormPerOperation(t *testing.T) {
	_, ts := serve(t, tableserver.WithAllowAnonymous())
	const prefixed = `<?xml version="1.0" encoding="utf-8"?><m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><m:code>`
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"Get Table ACL of a missing table", "GET", "/missing?comp=acl", "", 404, "ResourceNotFound"},
		{"Set Table ACL of a missing table", "PUT", "/missing?comp=acl", "", 404, "ResourceNotFound"},
		{"Set Table Service Properties with bad XML", "PUT", "/?restype=service&comp=properties", "<not xml", 400, ""},
		{"a preflight without Access-Control-Request-Method", "OPTIONS", "/Tables", "", 400, "InvalidHeaderValue"},
	} {
		h := map[string]string{"Accept": "application/xml"}
		if c.method == "OPTIONS" {
			h["Origin"] = "https://conform.example"
		}
		resp, body := sendAnonymous(t, ts.URL, c.method, c.path, h, c.body)
		if resp.StatusCode != c.status || (c.code != "" && resp.Header.Get("x-ms-error-code") != c.code) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
		if !strings.HasPrefix(body, prefixed) || !strings.Contains(body, `</m:code><m:message xml:lang="en-US">`) {
			t.Errorf("%s: body %s", c.name, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/xml" {
			t.Errorf("%s: Content-Type %s", c.name, ct)
		}
	}
	resp, body := sendAnonymous(t, ts.URL, "GET", "/missing(PartitionKey='p',RowKey='r')", map[string]string{"Accept": "*/*"}, "")
	if resp.StatusCode != 404 || !strings.Contains(body, `<error xmlns="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><code>`) {
		t.Errorf("an entity read in XML: %d %s", resp.StatusCode, body)
	}
	_, body = sendAnonymous(t, ts.URL, "OPTIONS", "/Tables", map[string]string{"Origin": "https://conform.example"}, "")
	if !strings.Contains(body, "A required CORS header is not present.") {
		t.Errorf("the preflight's message: %s", body)
	}
}

// TestVaryOrigin: an answer a CORS rule for any origin allows carries no Vary: Origin; one
// that depends on the origin does, on GET and HEAD (E-cors-vary).
func TestVaryOrigin(t *testing.T) {
	_, ts := serve(t, tableserver.WithAllowAnonymous())
	setCORS := func(origins string) {
		t.Helper()
		resp, body := sendAnonymous(t, ts.URL, "PUT", "/?restype=service&comp=properties", nil,
			`<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>`+origins+
				`</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`)
		if resp.StatusCode != 202 {
			t.Fatalf("Set Table Service Properties: %d %s", resp.StatusCode, body)
		}
	}
	get := func(origin string) http.Header {
		t.Helper()
		resp, _ := sendAnonymous(t, ts.URL, "GET", "/Tables", map[string]string{"Origin": origin, "Accept": "application/json;odata=nometadata"}, "")
		return resp.Header
	}
	setCORS("*")
	if h := get("https://a.example"); h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Vary") != "" {
		t.Errorf("a rule for any origin: Access-Control-Allow-Origin %q, Vary %q", h.Get("Access-Control-Allow-Origin"), h.Get("Vary"))
	}
	setCORS("https://a.example")
	if h := get("https://a.example"); h.Get("Access-Control-Allow-Origin") != "https://a.example" || h.Get("Vary") != "Origin" {
		t.Errorf("a rule for one origin: Access-Control-Allow-Origin %q, Vary %q", h.Get("Access-Control-Allow-Origin"), h.Get("Vary"))
	}
	if h := get("https://b.example"); h.Get("Access-Control-Allow-Origin") != "" || h.Get("Vary") != "Origin" {
		t.Errorf("another origin: Access-Control-Allow-Origin %q, Vary %q", h.Get("Access-Control-Allow-Origin"), h.Get("Vary"))
	}
}
