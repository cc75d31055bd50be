package service

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
)

// The Accept headers the SDKs send to the XML resources (EVIDENCE.md, E-acl-xml).
const (
	acceptXML     = "application/xml"
	acceptAtomXML = "application/atom+xml,application/xml"
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

// code is the error code of an answer as the SDKs read it: the x-ms-error-code header, or
// the <m:code> (or <Code>) of the XML error body where there is no header (the header is
// protocol.error.code-header's subject).
func (a answer) code() string {
	if c := a.header.Get("x-ms-error-code"); c != "" {
		return c
	}
	if m := xmlErrorCode.FindSubmatch(a.body); m != nil {
		return string(m[1])
	}
	return ""
}

// xmlErrorCode finds the code of an XML error body, in the OData or the Storage form.
var xmlErrorCode = regexp.MustCompile(`<(?:m:code|Code)>([^<]*)</(?:m:code|Code)>`)

func (a answer) String() string {
	body := string(a.body)
	if len(body) > 400 {
		body = body[:400] + "..."
	}
	return fmt.Sprintf("%s %s answered %d (x-ms-error-code %q) %s", a.method, a.path, a.status, a.code(), body)
}

// outcome is the answer as a MAY rule records it.
func (a answer) outcome() string { return fmt.Sprintf("%d %s", a.status, a.code()) }

// sendXML makes one request through raw with an XML body (nil for none) and the given
// headers (an empty value removes the header); req, when set, edits the request before it
// is signed and sent.
func sendXML(ctx context.Context, raw driver.RawHTTP, method, path string, body []byte, headers map[string]string, edit func(*http.Request)) answer {
	GinkgoHelper()
	req, err := raw.NewRequest(ctx, method, path, body)
	Expect(err).NotTo(HaveOccurred(), "building %s %s", method, path)
	req.Header.Set("Accept", acceptXML)
	req.Header.Del("DataServiceVersion")
	req.Header.Del("MaxDataServiceVersion")
	if body != nil {
		req.Header.Set("Content-Type", "application/xml")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if edit != nil {
		edit(req)
	}
	resp, err := raw.Do(req)
	Expect(err).NotTo(HaveOccurred(), "conform:transport: %s %s", method, path)
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	Expect(err).NotTo(HaveOccurred(), "conform:transport: reading the answer to %s %s", method, path)
	a := answer{method: method, path: path, status: resp.StatusCode, header: resp.Header, body: data}
	if strings.Contains(path, "comp=acl") && strings.Contains(req.Header.Get("Accept"), "xml") {
		framework.Requires("service.acl.accept-xml", "serve Table ACL with an XML Accept", func() {
			Expect(a.status).NotTo(Equal(http.StatusUnsupportedMediaType), "%s", a)
		})
	}
	return a
}

// decodeXML reads an XML answer body (a UTF-8 byte order mark is allowed) into v.
func decodeXML(a answer, v any) {
	GinkgoHelper()
	body := bytes.TrimPrefix(a.body, []byte("\xef\xbb\xbf"))
	Expect(xml.Unmarshal(body, v)).To(Succeed(), "the answer is not the XML expected: %s", a)
}

// accountChangesAllowed says whether specs may change account-wide settings of the backend:
// always on the reference, the emulators and the servers conform started for the run
// (kinds "image" and "exec"), elsewhere only with CONFORM_ALLOW_ACCOUNT_CHANGES=1.
func accountChangesAllowed(f *framework.F) bool {
	switch f.Info().Kind {
	case "reference", "model", "reference-http", "reference-cosmos", "azurite", "azurite-legacy", "azurite-docker", "mutant", "image", "exec":
		return true
	}
	return os.Getenv("CONFORM_ALLOW_ACCOUNT_CHANGES") == "1"
}

// skipUnlessAccountChanges skips a spec that changes account-wide settings where that is
// not allowed.
func skipUnlessAccountChanges(f *framework.F) {
	GinkgoHelper()
	if !accountChangesAllowed(f) {
		Skip("changes account-wide settings: set CONFORM_ALLOW_ACCOUNT_CHANGES=1 to run it against this endpoint")
	}
}

// toSecondary rewrites a request for the account's secondary location: the account's path
// segment (emulators, addressed by IP or localhost) or else the first label of the host
// gets the suffix "-secondary".
func toSecondary(req *http.Request) {
	if host := req.URL.Hostname(); host == "localhost" || net.ParseIP(host) != nil || !strings.Contains(host, ".") {
		seg, rest, _ := strings.Cut(strings.TrimPrefix(req.URL.EscapedPath(), "/"), "/")
		np := "/" + seg + "-secondary/" + rest
		req.URL.Path, req.URL.RawPath = np, np
		return
	}
	label, rest, _ := strings.Cut(req.URL.Host, ".")
	req.URL.Host = label + "-secondary." + rest
	req.Host = req.URL.Host
}
