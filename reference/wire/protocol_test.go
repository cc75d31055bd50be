package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/spec"
)

func TestEntityPathRoundTrip(t *testing.T) {
	keys := []string{"", "plain", "O'Brien", "''", "a b", "ü€😀", "%41", "(x),y='z'", "a+b&c=d", "RowKey='x'"}
	for _, pk := range keys {
		for _, rk := range []string{"r", "it's"} {
			p := EntityPath("tbl", pk, rk)
			res, err := ParseResource(p)
			if err != nil || res.Kind != ResourceEntity || res.Table != "tbl" || res.PartitionKey != pk || res.RowKey != rk {
				t.Errorf("ParseResource(%s) = %+v, %v; want (%q,%q)", p, res, err, pk, rk)
			}
		}
	}
	if got := EntityPath("t", "O'Brien", "a b"); got != "t(PartitionKey='O''Brien',RowKey='a%20b')" {
		t.Errorf("EntityPath = %s", got)
	}
}

func TestParseResource(t *testing.T) {
	cases := map[string]Resource{
		"":                               {Kind: ResourceService},
		"Tables":                         {Kind: ResourceTables},
		"Tables('abc')":                  {Kind: ResourceTable, Table: "abc"},
		"Tables(%27abc%27)":              {Kind: ResourceTable, Table: "abc"},
		"$batch":                         {Kind: ResourceBatch},
		"mytable":                        {Kind: ResourceEntitySet, Table: "mytable"},
		"mytable()":                      {Kind: ResourceEntitySet, Table: "mytable"},
		"t(RowKey='r',PartitionKey='p')": {Kind: ResourceEntity, Table: "t", PartitionKey: "p", RowKey: "r"},
		"t(PartitionKey=%27a%27%27b%27,RowKey='')": {Kind: ResourceEntity, Table: "t", PartitionKey: "a'b"},
	}
	for in, want := range cases {
		got, err := ParseResource(in)
		if err != nil || got != want {
			t.Errorf("ParseResource(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"t(PartitionKey='a')", "t(PartitionKey='a',RowKey='b',X='c')", "t(PartitionKey='a,RowKey='b')",
		"t(PartitionKey='a',RowKey='b'", "a/b", "%zz", "t(PartitionKey='a',PartitionKey='b')", "Tables('a',)", "t(PartitionKey=a,RowKey='b')", "t(PartitionKey='a',RowKey='b',)"} {
		if got, err := ParseResource(in); err == nil {
			t.Errorf("ParseResource(%q) = %+v, want an error", in, got)
		}
	}
}

func TestConnectionStrings(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("secret-key-bytes"))
	c, err := ParseConnectionString("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + key + ";EndpointSuffix=core.windows.net")
	if err != nil {
		t.Fatal(err)
	}
	if c.TableEndpoint != "https://acct.table.core.windows.net" || string(c.AccountKey) != "secret-key-bytes" {
		t.Errorf("parsed %+v", c)
	}
	c, err = ParseConnectionString("UseDevelopmentStorage=true")
	if err != nil || c.TableEndpoint != DevTableEndpoint || c.AccountName != DevAccountName || len(c.AccountKey) != 64 {
		t.Errorf("dev: %v %v", c, err)
	}
	c, err = ParseConnectionString("AccountName=acct;SharedAccessSignature=?sv=2019-02-02&tn=t&sp=r&se=2030-01-01T00%3A00%3A00Z&sig=c2VjcmV0;TableEndpoint=http://localhost:1/acct/")
	if err != nil || c.SAS == "" || c.TableEndpoint != "http://localhost:1/acct" {
		t.Fatalf("sas: %v %v", c, err)
	}
	for _, shown := range []string{c.Redacted(), c.String(), fmt.Sprintf("%v %+v %#v", c, c, c)} {
		if strings.Contains(shown, "c2VjcmV0") {
			t.Errorf("the signature leaks: %s", shown)
		}
	}
	c, _ = ParseConnectionString("AccountName=acct;AccountKey=" + key)
	for _, shown := range []string{c.Redacted(), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		if strings.Contains(shown, key) || strings.Contains(shown, "secret-key-bytes") {
			t.Errorf("the key leaks: %s", shown)
		}
	}
	for _, bad := range []string{"", "AccountName=a", "AccountName=a;AccountKey=!!!", "AccountKey=" + key, "junk", "AccountName=a;AccountKey=" + key + ";TableEndpoint=ftp://x", "DefaultEndpointsProtocol=gopher;AccountName=a;AccountKey=" + key} {
		_, err := ParseConnectionString(bad)
		if err == nil {
			t.Errorf("ParseConnectionString(%q) accepted", bad)
		} else if strings.Contains(err.Error(), key) {
			t.Errorf("error leaks the key: %v", err)
		}
	}
}

// hmacB64 is the documented signature: Base64(HMAC-SHA256(UTF8(StringToSign), key)).
func hmacB64(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestSharedKeyStringsToSign(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	// The documented Shared Key Lite example (SK): Date + "\n" + /account/Tables.
	r, _ := http.NewRequest(http.MethodGet, "https://testaccount1.table.core.windows.net/Tables", nil)
	r.Header.Set("x-ms-date", "Sun, 11 Oct 2009 19:52:39 GMT")
	if got := SharedKeyStringToSign(SharedKeyLite, r.Method, r.Header, "testaccount1", r.URL.EscapedPath(), r.URL.RawQuery); got != "Sun, 11 Oct 2009 19:52:39 GMT\n/testaccount1/Tables" {
		t.Errorf("lite string to sign = %q", got)
	}
	// Shared Key: VERB, Content-MD5, Content-Type, Date, resource; only comp is kept; the
	// emulator path names the account twice.
	r, _ = http.NewRequest(http.MethodPut, "http://127.0.0.1:10002/devstoreaccount1/mytable?comp=acl&timeout=5", nil)
	r.Header.Set("Content-Type", "application/xml")
	r.Header.Set("Date", "Sun, 11 Oct 2009 19:52:39 GMT")
	want := "PUT\n\napplication/xml\nSun, 11 Oct 2009 19:52:39 GMT\n/devstoreaccount1/devstoreaccount1/mytable?comp=acl"
	if got := SharedKeyStringToSign(SharedKey, r.Method, r.Header, "devstoreaccount1", r.URL.EscapedPath(), r.URL.RawQuery); got != want {
		t.Errorf("shared key string to sign = %q, want %q", got, want)
	}
	now, _ := http.ParseTime("Sun, 11 Oct 2009 19:52:39 GMT")
	SignRequest(r, SharedKey, "devstoreaccount1", key, now)
	if got := r.Header.Get("Authorization"); got != "SharedKey devstoreaccount1:"+hmacB64(key, want) {
		t.Errorf("Authorization = %q", got)
	}
	keys := func(a string) ([]byte, bool) { return key, a == "devstoreaccount1" }
	if acct, err := VerifySharedKey(r.Method, r.Header, r.URL.EscapedPath(), r.URL.RawQuery, keys, now.Add(time.Minute)); err != nil || acct != "devstoreaccount1" {
		t.Errorf("VerifySharedKey = %q, %v", acct, err)
	}
	_, err := VerifySharedKey(r.Method, r.Header, r.URL.EscapedPath(), r.URL.RawQuery, keys, now.Add(time.Hour))
	wantCode(t, err, "AuthenticationFailed")
	_, err = VerifySharedKey(http.MethodGet, r.Header, r.URL.EscapedPath(), r.URL.RawQuery, keys, now)
	wantCode(t, err, "AuthenticationFailed")
	for _, bad := range []string{"SharedKey", "Bearer x", "SharedKey :sig", "SharedKey acct:", "SharedKeyLite acct"} {
		_, err := ParseAuthorization(bad)
		wantCode(t, err, "InvalidAuthenticationInfo")
	}
}

func TestServiceSASMatchesDocumentAndSDK(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	start := time.Date(2021, 9, 20, 22, 0, 0, 0, time.UTC)
	expiry := start.Add(time.Hour)
	s := SAS{Table: "MyTable", Permissions: "dura", Start: start, Expiry: expiry, StartPK: "test", StartRK: "test1", EndPK: "test", EndRK: "test1"}
	q, err := s.Encode("acct", key)
	if err != nil {
		t.Fatal(err)
	}
	sts := "raud\n2021-09-20T22:00:00Z\n2021-09-20T23:00:00Z\n/table/acct/mytable\n\n\n\n2019-02-02\ntest\ntest1\ntest\ntest1"
	if q.Get("sig") != hmacB64(key, sts) || q.Get("sp") != "raud" || q.Get("tn") != "mytable" {
		t.Errorf("SAS = %v, want signature of %q", q, sts)
	}
	// The Go SDK signs the same string (GO:sas_service.go).
	cred, err := aztables.NewSharedKeyCredential("acct", base64.StdEncoding.EncodeToString(key))
	if err != nil {
		t.Fatal(err)
	}
	sdkQuery, err := aztables.SASSignatureValues{Version: SASVersion, Permissions: "raud", StartTime: start, ExpiryTime: expiry, TableName: "MyTable",
		StartPartitionKey: "test", StartRowKey: "test1", EndPartitionKey: "test", EndRowKey: "test1"}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	sq, _ := url.ParseQuery(sdkQuery)
	if sq.Get("sig") != q.Get("sig") {
		t.Errorf("SDK signature %q, ours %q", sq.Get("sig"), q.Get("sig"))
	}

	parsed, err := ParseSAS(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := parsed.Verify("acct", key, start.Add(time.Minute)); err != nil {
		t.Errorf("Verify: %v", err)
	}
	wantCode(t, parsed.Verify("acct", key, expiry.Add(time.Second)), "AuthenticationFailed")
	wantCode(t, parsed.Verify("other", key, start), "AuthenticationFailed")
	if err := parsed.Allows("mytable", "ra", "test", "test1"); err != nil {
		t.Errorf("Allows in range: %v", err)
	}
	wantCode(t, parsed.Allows("mytable", "a", "test", "test2"), "AuthorizationFailure")
	wantCode(t, parsed.Allows("mytable", "a", "tesu", "test1"), "AuthorizationFailure")
	wantCode(t, parsed.Allows("other", "a", "test", "test1"), "AuthorizationFailure")
	readOnly, _ := SAS{Table: "t", Permissions: "r", Expiry: expiry}.Encode("acct", key)
	ro, _ := ParseSAS(readOnly)
	wantCode(t, ro.Allows("t", "a", "x", "y"), "AuthorizationPermissionMismatch")
	// A tampered parameter breaks the signature.
	q.Set("sp", "raud")
	q.Set("epk", "zzz")
	tampered, _ := ParseSAS(q)
	wantCode(t, tampered.Verify("acct", key, start), "AuthenticationFailed")
	if _, err := (SAS{Table: "t", Permissions: "x", Expiry: expiry}).Encode("a", key); err == nil {
		t.Error("an unknown permission was signed")
	}
}

// storageSuccessExample is EVIDENCE.md 4's success response (one insert part), with fixed ids.
const storageSuccessExample = "--batchresponse_b\r\n" +
	"Content-Type: multipart/mixed; boundary=changesetresponse_c\r\n" +
	"\r\n" +
	"--changesetresponse_c\r\n" +
	"Content-Type: application/http\r\n" +
	"Content-Transfer-Encoding: binary\r\n" +
	"\r\n" +
	"HTTP/1.1 204 No Content\r\n" +
	"X-Content-Type-Options: nosniff\r\n" +
	"Cache-Control: no-cache\r\n" +
	"Preference-Applied: return-no-content\r\n" +
	"DataServiceVersion: 3.0;\r\n" +
	"Location: https://acct.table.core.windows.net/tbl(PartitionKey='003',RowKey='x')\r\n" +
	"DataServiceId: https://acct.table.core.windows.net/tbl(PartitionKey='003',RowKey='x')\r\n" +
	"ETag: W/\"datetime'2021-09-21T00%3A53%3A42.0078278Z'\"\r\n" +
	"\r\n" +
	"\r\n" +
	"--changesetresponse_c\r\n" +
	"Content-Type: application/http\r\n" +
	"Content-Transfer-Encoding: binary\r\n" +
	"\r\n" +
	"HTTP/1.1 204 No Content\r\n" +
	"X-Content-Type-Options: nosniff\r\n" +
	"Cache-Control: no-cache\r\n" +
	"DataServiceVersion: 1.0;\r\n" +
	"\r\n" +
	"\r\n" +
	"--changesetresponse_c--\r\n" +
	"--batchresponse_b--\r\n"

// storageFailureExample is a recorded Storage failure: only the failing part, with its
// "0:" prefix.
const storageFailureExample = "--batchresponse_b\r\n" +
	"Content-Type: multipart/mixed; boundary=changesetresponse_c\r\n" +
	"\r\n" +
	"--changesetresponse_c\r\n" +
	"Content-Type: application/http\r\n" +
	"Content-Transfer-Encoding: binary\r\n" +
	"\r\n" +
	"HTTP/1.1 404 Not Found\r\n" +
	"X-Content-Type-Options: nosniff\r\n" +
	"DataServiceVersion: 3.0;\r\n" +
	"Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n" +
	"\r\n" +
	`{"odata.error":{"code":"TableNotFound","message":{"lang":"en-US","value":"0:The table specified does not exist.\nRequestId:2c0d8616-7002-00b5-38cd-5c8c40000000\nTime:2021-06-09T01:17:13.5943330Z"}}}` + "\r\n" +
	"--changesetresponse_c--\r\n" +
	"--batchresponse_b--\r\n"

func TestBatchResponseFramingIsStorageByteForByte(t *testing.T) {
	loc := "https://acct.table.core.windows.net/tbl(PartitionKey='003',RowKey='x')"
	resp := BatchResponse{HasChangeset: true, Changeset: []ResponsePart{
		{Status: 204, Header: Fields{{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-cache"}, {"Preference-Applied", "return-no-content"},
			{"DataServiceVersion", "3.0;"}, {"Location", loc}, {"DataServiceId", loc}, {"ETag", `W/"datetime'2021-09-21T00%3A53%3A42.0078278Z'"`}}},
		{Status: 204, Header: Fields{{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-cache"}, {"DataServiceVersion", "1.0;"}}},
	}}
	if got := string(EncodeBatchResponse("batchresponse_b", "changesetresponse_c", resp)); got != storageSuccessExample {
		t.Errorf("success framing differs:\n%q\nwant\n%q", got, storageSuccessExample)
	}
	se := spec.ErrTableNotFound.New().AtIndex(0)
	now := time.Date(2021, 6, 9, 1, 17, 13, 594333000, time.UTC)
	fail := BatchResponse{HasChangeset: true, Changeset: []ResponsePart{{Status: 404,
		Header: Fields{{"X-Content-Type-Options", "nosniff"}, {"DataServiceVersion", "3.0;"}, {"Content-Type", MinimalMetadata.ContentType()}},
		Body:   EncodeErrorJSON(se, "2c0d8616-7002-00b5-38cd-5c8c40000000", now)}}}
	if got := string(EncodeBatchResponse("batchresponse_b", "changesetresponse_c", fail)); got != storageFailureExample {
		t.Errorf("failure framing differs:\n%q\nwant\n%q", got, storageFailureExample)
	}
}

func TestParseBatchResponseToleratesBareLF(t *testing.T) {
	for name, body := range map[string]string{"crlf": storageFailureExample, "lf": strings.ReplaceAll(storageFailureExample, "\r\n", "\n")} {
		r, err := ParseBatchResponse("multipart/mixed; boundary=batchresponse_b", []byte(body))
		if err != nil || !r.HasChangeset || len(r.Changeset) != 1 {
			t.Fatalf("%s: %+v, %v", name, r, err)
		}
		p := r.Changeset[0]
		e := DecodeError(p.Status, http.Header{}, p.Body)
		if e.Status != 404 || e.Code != "TableNotFound" || !e.Indexed || e.FailedIndex != 0 || e.Message != "The table specified does not exist." || e.RequestID != "2c0d8616-7002-00b5-38cd-5c8c40000000" {
			t.Errorf("%s: decoded %+v", name, e)
		}
	}
	r, err := ParseBatchResponse("multipart/mixed; boundary=batchresponse_b", []byte(storageSuccessExample))
	if err != nil || len(r.Changeset) != 2 || r.Changeset[0].Header.Get("etag") == "" || r.Changeset[1].Status != 204 {
		t.Errorf("success: %+v, %v", r, err)
	}
}

func TestBatchRequestRoundTrip(t *testing.T) {
	req := BatchRequest{Changesets: [][]RequestPart{{
		{Method: "POST", URL: "https://a.table.core.windows.net/t", Header: Fields{{"Content-Type", "application/json"}, {"Content-ID", "1"}}, Body: []byte(`{"PartitionKey":"p","RowKey":"1"}`)},
		{Method: "DELETE", URL: "https://a.table.core.windows.net/t(PartitionKey='p',RowKey='2')", Header: Fields{{"If-Match", "*"}}},
	}}}
	ct, body := EncodeBatchRequest("batch_1", "changeset_2", req)
	got, err := ParseBatchRequest(ct, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Changesets) != 1 || len(got.Changesets[0]) != 2 {
		t.Fatalf("parsed %+v", got)
	}
	p0, p1 := got.Changesets[0][0], got.Changesets[0][1]
	if p0.Method != "POST" || string(p0.Body) != `{"PartitionKey":"p","RowKey":"1"}` || p0.Header.Get("content-id") != "1" {
		t.Errorf("part 0 = %+v", p0)
	}
	if p1.Method != "DELETE" || p1.URL != "https://a.table.core.windows.net/t(PartitionKey='p',RowKey='2')" || len(p1.Body) != 0 || p1.Header.Get("If-Match") != "*" {
		t.Errorf("part 1 = %+v", p1)
	}
	for _, bad := range []struct{ ct, body string }{
		{"application/json", "{}"},
		{"multipart/mixed", "x"},
		{"multipart/mixed; boundary=b", "--b\r\nContent-Type: text/plain\r\n\r\nhello\r\n--b--\r\n"},
		{"multipart/mixed; boundary=b", "--b\r\nContent-Type: application/http\r\n\r\nnot a request line\r\n--b--\r\n"},
		{"multipart/mixed; boundary=b", "--b--\r\n"},
		{"multipart/mixed; boundary=b", "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nGET"},
	} {
		_, err := ParseBatchRequest(bad.ct, []byte(bad.body))
		wantCode(t, err, "InvalidInput")
	}
}

func TestErrorBodies(t *testing.T) {
	se := spec.ErrUpdateCondition.New()
	now := time.Date(2021, 1, 2, 3, 4, 5, 600000000, time.UTC)
	j := EncodeErrorJSON(se, "rid", now)
	want := `{"odata.error":{"code":"UpdateConditionNotSatisfied","message":{"lang":"en-US","value":"The update condition specified in the request was not satisfied.\nRequestId:rid\nTime:2021-01-02T03:04:05.6000000Z"}}}`
	if string(j) != want {
		t.Errorf("json = %s", j)
	}
	x := EncodeErrorXML(se, "rid", now)
	if !strings.HasPrefix(string(x), `<?xml version="1.0" encoding="utf-8"?><error xmlns="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><code>UpdateConditionNotSatisfied</code><message xml:lang="en-US">`) {
		t.Errorf("xml = %s", x)
	}
	for _, body := range [][]byte{j, x} {
		e := DecodeError(412, http.Header{}, body)
		if e.Code != se.Code || e.Message != se.Message || e.RequestID != "rid" || e.Indexed || e.Status != 412 {
			t.Errorf("decoded %+v from %s", e, body)
		}
	}
	h := http.Header{}
	h.Set(HeaderErrorCode, "AuthenticationFailed")
	h.Set(HeaderRequestID, "hdr")
	blob := []byte("\xef\xbb\xbf<?xml version=\"1.0\"?><Error><Code>X</Code><Message>m</Message></Error>")
	if e := DecodeError(403, h, blob); e.Code != "AuthenticationFailed" || e.Message != "m" || e.RequestID != "hdr" {
		t.Errorf("decoded %+v", e)
	}
	// Cosmos form: RequestID, no Time, index prefix.
	cosmos := []byte(`{"odata.error":{"code":"ResourceNotFound","message":{"lang":"en-us","value":"0:The specified resource does not exist.\n\nRequestID:abc\n"}}}`)
	if e := DecodeError(404, http.Header{}, cosmos); !e.Indexed || e.FailedIndex != 0 || e.RequestID != "abc" || e.Message != "The specified resource does not exist." {
		t.Errorf("cosmos decoded %+v", e)
	}
}
