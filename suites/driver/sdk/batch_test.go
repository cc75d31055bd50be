package sdk

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// A Storage success answer (EVIDENCE.md 4, framing with CRLF).
var storageSuccess = crlf(`--batchresponse_1
Content-Type: multipart/mixed; boundary=changesetresponse_2

--changesetresponse_2
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
X-Content-Type-Options: nosniff
Cache-Control: no-cache
Preference-Applied: return-no-content
DataServiceVersion: 3.0;
ETag: W/"datetime'2021-09-21T00%3A53%3A42.0078278Z'"


--changesetresponse_2
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 204 No Content
DataServiceVersion: 1.0;


--changesetresponse_2--
--batchresponse_1--
`)

// A Storage failure answer: only the failing part, with its "N:" prefix.
var storageFailure = crlf(`--batchresponse_1
Content-Type: multipart/mixed; boundary=changesetresponse_2

--changesetresponse_2
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 409 Conflict
DataServiceVersion: 3.0;
Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8

{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:The specified entity already exists.\nRequestId:abc\nTime:2021-09-21T00:53:42.0078278Z"}}}
--changesetresponse_2--
--batchresponse_1--
`)

// A Cosmos failure answer: bare LF framing, fullmetadata error, "RequestID" (EVIDENCE.md 4, 8).
var cosmosFailure = `--batchresponse_9
Content-Type: multipart/mixed; boundary=changesetresponse_8

--changesetresponse_8
Content-Type: application/http
Content-Transfer-Encoding: binary

HTTP/1.1 404 Not Found
Content-Type: application/json;odata=fullmetadata

{"odata.error":{"code":"ResourceNotFound","message":{"lang":"en-us","value":"0:The specified resource does not exist.\n\nRequestID:x-1\n"}}}
--changesetresponse_8--
--batchresponse_9--
`

func TestParseBatchSuccess(t *testing.T) {
	parts, err := parseBatchBody("multipart/mixed; boundary=batchresponse_1", []byte(storageSuccess))
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Status != 204 || parts[1].Status != 204 {
		t.Fatalf("parts = %+v", parts)
	}
	if got := parts[0].Header.Get("ETag"); got != `W/"datetime'2021-09-21T00%3A53%3A42.0078278Z'"` {
		t.Errorf("ETag = %q", got)
	}
	if batchFailure(parts, "") != nil {
		t.Error("success read as failure")
	}
}

func TestParseBatchFailure(t *testing.T) {
	for name, tc := range map[string]struct {
		contentType, body string
		status            int
		code, message     string
		index             int
	}{
		"storage": {"multipart/mixed; boundary=batchresponse_1", storageFailure, 409, "EntityAlreadyExists", "The specified entity already exists.", 1},
		// Without a Content-Type header the boundary is read from the first line.
		"cosmos": {"", cosmosFailure, 404, "ResourceNotFound", "The specified resource does not exist.", 0},
	} {
		t.Run(name, func(t *testing.T) {
			parts, err := parseBatchBody(tc.contentType, []byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			e := batchFailure(parts, "req-1")
			if e == nil {
				t.Fatal("no failure found")
			}
			if e.Status != tc.status || e.Code != tc.code || e.Message != tc.message || !e.Indexed || e.FailedIndex != tc.index || e.RequestID != "req-1" {
				t.Errorf("got %+v", e)
			}
		})
	}
}

func TestParseBatchFailureWithoutIndex(t *testing.T) {
	body := strings.Replace(storageFailure, `"1:The specified`, `"The specified`, 1)
	parts, err := parseBatchBody("multipart/mixed; boundary=batchresponse_1", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if e := batchFailure(parts, ""); e == nil || e.Indexed {
		t.Errorf("got %+v, want a failure without index", e)
	}
}

func TestParseBatchRejectsGarbage(t *testing.T) {
	if _, err := parseBatchBody("text/plain", []byte("no multipart here")); err == nil {
		t.Error("no error for a body without boundary")
	}
	bad := strings.Replace(storageSuccess, "HTTP/1.1 204 No Content", "garbage", 1)
	if _, err := parseBatchBody("multipart/mixed; boundary=batchresponse_1", []byte(bad)); err == nil {
		t.Error("no error for a part that is not an HTTP response")
	}
}

// TestTransactionFailureFromSDKError feeds the SDK's own failed-transaction error (202, no
// code: EVIDENCE.md 12 #9) through the driver's mapping.
func TestTransactionFailureFromSDKError(t *testing.T) {
	resp := &http.Response{
		StatusCode: http.StatusAccepted,
		Header:     http.Header{"Content-Type": {"multipart/mixed; boundary=batchresponse_1"}, "X-Ms-Request-Id": {"r-9"}},
		Body:       io.NopCloser(bytes.NewReader([]byte(storageFailure))),
	}
	err := transactionFailure(resp)
	e, ok := driver.AsError(err)
	if !ok || e.Status != 409 || e.Code != "EntityAlreadyExists" || e.FailedIndex != 1 || e.RequestID != "r-9" {
		t.Errorf("got %v", err)
	}
}

func TestTransactionActionsAlwaysCarryIfMatchOnUpdates(t *testing.T) {
	ops := []api.BatchOp{
		{Kind: api.BatchReplace, Entity: api.NewEntity("p", "a", nil)},
		{Kind: api.BatchMerge, Entity: api.NewEntity("p", "b", nil), IfMatch: `W/"x"`},
		{Kind: api.BatchDelete, Entity: api.NewEntity("p", "O'c", nil)},
		{Kind: api.BatchInsertOrMerge, Entity: api.NewEntity("p", "d", nil)},
	}
	actions, err := transactionActions(ops)
	if err != nil {
		t.Fatal(err)
	}
	if actions[0].IfMatch == nil || *actions[0].IfMatch != azcore.ETagAny {
		t.Errorf("replace without IfMatch: %v", actions[0].IfMatch)
	}
	if actions[1].IfMatch == nil || *actions[1].IfMatch != `W/"x"` {
		t.Errorf("merge IfMatch: %v", actions[1].IfMatch)
	}
	if actions[2].ActionType != aztables.TransactionTypeDelete || !strings.Contains(string(actions[2].Entity), `"O''c"`) {
		t.Errorf("delete: %s %s (want the key quote-escaped for the URL)", actions[2].ActionType, actions[2].Entity)
	}
	if actions[3].IfMatch != nil || actions[3].ActionType != aztables.TransactionTypeInsertMerge {
		t.Errorf("insert-or-merge: %+v", actions[3])
	}
	if _, err := transactionActions([]api.BatchOp{{Kind: api.BatchRetrieve}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("retrieve: %v", err)
	}
	if _, err := transactionActions([]api.BatchOp{{Kind: api.BatchOpKind(99)}}); err == nil {
		t.Error("unknown kind: no error")
	}
}
