package tableserver_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
)

// TestMalformedRequestsGetDocumented4xx sends requests no SDK would, signed or not, and
// checks the status, the x-ms-error-code, the error body's code, and that nothing answers
// 5xx (the serve helper also checks that the panic guard never fired).
func TestMalformedRequestsGetDocumented4xx(t *testing.T) {
	_, ts := serve(t)
	b := client(t, ts)
	c := ctx(t)
	if err := b.CreateTable(c, "malformed"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		unsigned                 bool
		status                   int
		code                     string
	}{
		{"bad JSON", "POST", "malformed", `{"PartitionKey":`, nil, false, 400, "InvalidInput"},
		{"JSON array", "POST", "malformed", `[1]`, nil, false, 400, "InvalidInput"},
		{"duplicate property", "POST", "malformed", `{"PartitionKey":"a","RowKey":"b","x":1,"x":2}`, nil, false, 400, "DuplicatePropertiesSpecified"},
		{"bad Int64", "POST", "malformed", `{"PartitionKey":"a","RowKey":"b","x@odata.type":"Edm.Int64","x":"1.5"}`, nil, false, 400, "InvalidValueType"},
		{"date before 1601", "POST", "malformed", `{"PartitionKey":"a","RowKey":"b","x@odata.type":"Edm.DateTime","x":"1600-01-01T00:00:00Z"}`, nil, false, 400, "OutOfRangeInput"},
		{"missing keys", "POST", "malformed", `{"x":1}`, nil, false, 400, "PropertiesNeedValue"},
		{"atom body", "POST", "malformed", `<entry/>`, map[string]string{"Content-Type": "application/atom+xml"}, false, 415, "AtomFormatNotSupported"},
		{"atom accept", "GET", "malformed()", "", map[string]string{"Accept": "application/atom+xml"}, false, 415, "AtomFormatNotSupported"},
		{"unknown verb", "FOO", "Tables", "", nil, false, 405, "MethodNotAllowed"},
		{"PUT on Tables", "PUT", "Tables", "{}", nil, false, 405, "MethodNotAllowed"},
		{"X-HTTP-Method on PUT", "PUT", "malformed(PartitionKey='a',RowKey='b')", "{}", map[string]string{"X-HTTP-Method": "MERGE"}, false, 400, "XMethodNotUsingPost"},
		{"X-HTTP-Method bad value", "POST", "malformed(PartitionKey='a',RowKey='b')", "{}", map[string]string{"X-HTTP-Method": "GET"}, false, 400, "XMethodIncorrectValue"},
		{"X-HTTP-Method twice", "POST", "malformed(PartitionKey='a',RowKey='b')", "{}", map[string]string{"X-HTTP-Method": "MERGE, PUT"}, false, 400, "XMethodIncorrectCount"},
		{"unclosed parenthesis", "GET", "malformed(PartitionKey='a',RowKey='b", "", nil, false, 400, "InvalidUri"},
		{"unterminated key", "GET", "malformed(PartitionKey='a)", "", nil, false, 400, "InvalidInput"},
		{"bad entity path", "GET", "malformed(PartitionKey='a')", "", nil, false, 400, "InvalidUri"},
		{"nested path", "GET", "malformed/x/y", "", nil, false, 400, "InvalidUri"},
		{"If-None-Match on PUT", "PUT", "malformed(PartitionKey='a',RowKey='b')", "{}", map[string]string{"If-None-Match": "*"}, false, 400, "InvalidInput"},
		{"If-None-Match on DELETE", "DELETE", "malformed(PartitionKey='a',RowKey='b')", "", map[string]string{"If-None-Match": "*"}, false, 400, "InvalidInput"},
		{"both conditions", "PUT", "malformed(PartitionKey='a',RowKey='b')", "{}", map[string]string{"If-None-Match": "*", "If-Match": "*"}, false, 400, "InvalidInput"},
		{"malformed ETag", "PUT", "malformed(PartitionKey='a',RowKey='b')", "{}", map[string]string{"If-Match": "abc"}, false, 400, "InvalidInput"},
		{"non-integer $top", "GET", "malformed()?$top=abc", "", nil, false, 400, "InvalidQueryParameterValue"},
		{"zero $top on Query Tables", "GET", "Tables?$top=0", "", nil, false, 400, "InvalidInput"},
		{"negative $top", "GET", "malformed()?$top=-1", "", nil, false, 400, "InvalidInput"},
		{"x-ms-version not a date", "GET", "malformed()", "", map[string]string{"x-ms-version": "invalid"}, false, 400, "InvalidHeaderValue"},
		{"bad timeout", "GET", "malformed()?timeout=-1", "", nil, false, 400, "InvalidQueryParameterValue"},
		{"batch not multipart", "POST", "$batch", "{}", map[string]string{"Content-Type": "application/json"}, false, 400, "InvalidInput"},
		{"batch garbage", "POST", "$batch", "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--\r\n", map[string]string{"Content-Type": "multipart/mixed; boundary=b"}, false, 400, "InvalidInput"},
		{"batch truncated", "POST", "$batch", "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nPOST", map[string]string{"Content-Type": "multipart/mixed; boundary=b"}, false, 400, "InvalidInput"},
		{"GET on $batch", "GET", "$batch", "", nil, false, 405, "MethodNotAllowed"},
		{"client request id too long", "GET", "Tables", "", map[string]string{"x-ms-client-request-id": strings.Repeat("x", 1025)}, false, 400, "InvalidHeaderValue"},
		{"anonymous", "GET", "Tables", "", nil, true, 403, "AuthorizationFailure"},
		{"garbled authorization", "GET", "Tables", "", map[string]string{"Authorization": "Basic abc"}, false, 400, "InvalidAuthenticationInfo"},
		{"wrong signature", "GET", "Tables", "", map[string]string{"Authorization": "SharedKey devstoreaccount1:AAAA"}, false, 403, "AuthenticationFailed"},
		{"stale date", "GET", "Tables", "", map[string]string{"x-ms-date": "Sun, 11 Oct 2009 19:52:39 GMT"}, false, 403, "AuthenticationFailed"},
		{"bad SAS", "GET", "malformed()?sv=2019-02-02&tn=malformed&sp=r&se=bad&sig=x", "", nil, true, 403, "AuthenticationFailed"},
		{"unknown comp", "GET", "malformed?comp=foo", "", nil, false, 400, "InvalidQueryParameterValue"},
		{"too many ACL policies", "PUT", "malformed?comp=acl", "<SignedIdentifiers>" + strings.Repeat("<SignedIdentifier><Id>a</Id></SignedIdentifier>", 6) + "</SignedIdentifiers>", nil, false, 400, "InvalidXmlDocument"},
		{"bad ACL XML", "PUT", "malformed?comp=acl", "<SignedIdentifiers><", nil, false, 400, "InvalidXmlDocument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			req, err := b.NewRequest(c, tc.method, tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			var resp *http.Response
			if tc.unsigned {
				resp, err = http.DefaultClient.Do(req)
			} else {
				resp, err = b.Do(req)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			e := wire.DecodeError(resp.StatusCode, resp.Header, data)
			if resp.StatusCode != tc.status || e.Code != tc.code {
				t.Errorf("got %d %s (%s), want %d %s", resp.StatusCode, e.Code, data, tc.status, tc.code)
			}
			if fromBody := wire.DecodeError(resp.StatusCode, http.Header{}, data); fromBody.Code != tc.code {
				t.Errorf("body code %q, header code %q", fromBody.Code, tc.code)
			}
		})
	}
}

func TestOversizedBodyIsRefusedBeforeReading(t *testing.T) {
	_, ts := serve(t)
	b := client(t, ts)
	c := ctx(t)
	big := bytes.Repeat([]byte("x"), spec.MaxRequestBodyBytes+1)
	req, _ := b.NewRequest(c, "POST", "anytable", big)
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || resp.Header.Get("x-ms-error-code") != "RequestBodyTooLarge" {
		t.Errorf("got %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	// Chunked (no Content-Length): bounded while read.
	req, _ = b.NewRequest(c, "POST", "$batch", nil)
	req.Body = io.NopCloser(bytes.NewReader(big))
	req.ContentLength = -1
	req.Header.Set("Content-Type", "multipart/mixed; boundary=b")
	resp, err = b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked: got %d", resp.StatusCode)
	}
}

func TestErrorsFollowAccept(t *testing.T) {
	_, ts := serve(t)
	b := client(t, ts)
	c := ctx(t)
	for accept, wantType := range map[string]string{"*/*": "application/xml", "application/json;odata=nometadata": "application/json;odata=nometadata"} {
		req, _ := b.NewRequest(c, "GET", "missing(PartitionKey='a',RowKey='b')", nil)
		req.Header.Set("Accept", accept)
		req.Header.Set("x-ms-client-request-id", "my-id")
		resp, err := b.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), wantType) {
			t.Errorf("Accept %s: %d %s %s", accept, resp.StatusCode, resp.Header.Get("Content-Type"), data)
		}
		for _, h := range []string{"x-ms-request-id", "x-ms-version", "Date", "Server"} {
			if resp.Header.Get(h) == "" {
				t.Errorf("no %s header", h)
			}
		}
		if resp.Header.Get("x-ms-client-request-id") != "my-id" {
			t.Errorf("client request id not echoed")
		}
	}
}

// TestAztablesSDKAgainstTheServer drives the server with the real Go SDK through a
// development-account connection string.
func TestAztablesSDKAgainstTheServer(t *testing.T) {
	_, ts := serve(t)
	opts := &aztables.ClientOptions{ClientOptions: policy.ClientOptions{
		InsecureAllowCredentialWithHTTP: true,
		Retry:                           policy.RetryOptions{MaxRetries: -1},
		Transport:                       &http.Client{Timeout: 10 * time.Second},
	}}
	svc, err := aztables.NewServiceClientFromConnectionString(devConnectionString(ts.URL+"/"+tableserver.DevAccountName), opts)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := svc.CreateTable(c, "sdktable", nil); err != nil {
		t.Fatal(err)
	}
	tc := svc.NewClient("sdktable")
	for i, rk := range []string{"a", "b", "c"} {
		ent := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "pk", RowKey: rk}, Properties: map[string]any{"n": int32(i), "big": aztables.EDMInt64(1 << 40)}}
		body, _ := ent.MarshalJSON()
		if _, err := tc.AddEntity(c, body, nil); err != nil {
			t.Fatalf("AddEntity: %v", err)
		}
	}
	up := []byte(`{"PartitionKey":"pk","RowKey":"a","extra":"x"}`)
	if _, err := tc.UpsertEntity(c, up, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatalf("UpsertEntity: %v", err)
	}
	got, err := tc.GetEntity(c, "pk", "a", nil)
	if err != nil {
		t.Fatalf("GetEntity: %v", err)
	}
	var e aztables.EDMEntity
	if err := e.UnmarshalJSON(got.Value); err != nil || e.Properties["extra"] != "x" || e.Properties["big"] != aztables.EDMInt64(1<<40) {
		t.Errorf("GetEntity = %s (%v)", got.Value, err)
	}
	if _, err := tc.UpdateEntity(c, []byte(`{"PartitionKey":"pk","RowKey":"a","only":true}`), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &got.ETag}); err != nil {
		t.Fatalf("UpdateEntity replace: %v", err)
	}
	if _, err := tc.UpdateEntity(c, []byte(`{"PartitionKey":"pk","RowKey":"b","m":1}`), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatalf("UpdateEntity merge: %v", err)
	}
	filter, top := "PartitionKey eq 'pk'", int32(2)
	pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Top: &top})
	pages, count := 0, 0
	for pager.More() {
		p, err := pager.NextPage(c)
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		pages++
		count += len(p.Entities)
	}
	if pages != 2 || count != 3 {
		t.Errorf("paging: %d pages, %d entities", pages, count)
	}
	if _, err := tc.DeleteEntity(c, "pk", "c", nil); err != nil {
		t.Fatalf("DeleteEntity: %v", err)
	}
	etagAny := azcore.ETagAny
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"pk","RowKey":"t1"}`)},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: []byte(`{"PartitionKey":"pk","RowKey":"a","tx":1}`), IfMatch: &etagAny},
		{ActionType: aztables.TransactionTypeDelete, Entity: []byte(`{"PartitionKey":"pk","RowKey":"b"}`)},
	}
	if _, err := tc.SubmitTransaction(c, actions, nil); err != nil {
		t.Fatalf("SubmitTransaction: %v", err)
	}
	if _, err := tc.GetEntity(c, "pk", "b", nil); err == nil {
		t.Error("the transaction's delete did not happen")
	}
	// A failing transaction comes back as the SDK's ResponseError (EVIDENCE.md 12 #9).
	_, err = tc.SubmitTransaction(c, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"pk","RowKey":"t1"}`)}}, nil)
	if err == nil {
		t.Error("a conflicting transaction succeeded")
	}
	if _, err := svc.DeleteTable(c, "sdktable", nil); err != nil {
		t.Fatalf("DeleteTable: %v", err)
	}
}

// TestEmptyChangesetIsAnsweredWithAnEmptyChangeset checks the answer Storage gave to a change
// set without operations (EVIDENCE.md 13, E-batch-empty-changeset): 202 and an empty change
// set, nothing applied.
func TestEmptyChangesetIsAnsweredWithAnEmptyChangeset(t *testing.T) {
	_, ts := serve(t)
	b := client(t, ts)
	c := ctx(t)
	body := "--batch_a\r\nContent-Type: multipart/mixed; boundary=changeset_b\r\n\r\n--changeset_b--\r\n\r\n--batch_a--\r\n"
	req, err := b.NewRequest(c, "POST", "$batch", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "multipart/mixed; boundary=batch_a")
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("got %d: %s", resp.StatusCode, data)
	}
	parsed, err := wire.ParseBatchResponse(resp.Header.Get("Content-Type"), data)
	if err != nil {
		t.Fatalf("unreadable answer %q: %v", data, err)
	}
	if !parsed.HasChangeset || len(parsed.Changeset) != 0 || len(parsed.Retrieves) != 0 {
		t.Errorf("answer %+v, want one empty change set", parsed)
	}
}
