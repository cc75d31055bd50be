package sdk

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/tableconform/conform/suites/driver"
)

func TestParseErrorBody(t *testing.T) {
	for name, tc := range map[string]struct{ body, code, msg string }{
		"json": {`{"odata.error":{"code":"TableNotFound","message":{"lang":"en-US","value":"The table specified does not exist.\nRequestId:1\nTime:2024"}}}`, "TableNotFound", "The table specified does not exist."},
		"xml": {"\xef\xbb\xbf" + `<?xml version="1.0" encoding="utf-8"?><error xmlns="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><code>UpdateConditionNotSatisfied</code><message xml:lang="en-US">The update condition specified in the request was not satisfied.
RequestId:2
Time:2024</message></error>`, "UpdateConditionNotSatisfied", "The update condition specified in the request was not satisfied."},
		"empty":   {"", "", ""},
		"garbage": {"{not json", "", ""},
	} {
		code, msg := parseErrorBody([]byte(tc.body))
		if code != tc.code || msg != tc.msg {
			t.Errorf("%s: got %q %q, want %q %q", name, code, msg, tc.code, tc.msg)
		}
	}
}

func TestMapErrorReadsResponseError(t *testing.T) {
	resp := &http.Response{
		StatusCode: 404,
		Header:     http.Header{"X-Ms-Error-Code": {"ResourceNotFound"}, "X-Ms-Request-Id": {"rid"}},
		Body:       io.NopCloser(strings.NewReader(`{"odata.error":{"code":"ResourceNotFound","message":{"lang":"en-US","value":"The specified resource does not exist.\nRequestId:rid"}}}`)),
		Request:    &http.Request{Method: "GET", URL: &url.URL{Scheme: "http", Host: "h", Path: "/t"}},
	}
	err := mapError("get entity", runtime.NewResponseError(resp))
	e, ok := driver.AsError(err)
	if !ok || e.Status != 404 || e.Code != "ResourceNotFound" || e.Message != "The specified resource does not exist." || e.RequestID != "rid" {
		t.Errorf("got %#v", err)
	}
}

func TestMapErrorWrapsTransportFailures(t *testing.T) {
	err := mapError("query", errors.New("dial tcp: refused"))
	var te *driver.TransportError
	if !errors.As(err, &te) || !driver.IsTransport(err) {
		t.Errorf("got %T %v", err, err)
	}
	if mapError("x", nil) != nil {
		t.Error("nil mapped to an error")
	}
}

func TestRecoveredTurnsPanicsIntoErrors(t *testing.T) {
	f := func() (err error) {
		defer recovered("update entity", &err)
		var m map[string]any
		_ = m["PartitionKey"].(string) // the SDK's own failure mode (EVIDENCE.md 12 #11)
		return nil
	}
	err := f()
	if err == nil || !strings.Contains(err.Error(), "panicked") || !driver.IsTransport(err) {
		t.Errorf("got %v", err)
	}
}

func TestNewNeverLeaksTheKey(t *testing.T) {
	const secret = "c2VjcmV0LWtleS1ieXRlcw=="
	for _, cs := range []string{
		"AccountName=a;AccountKey=" + secret + "%%%;TableEndpoint=http://127.0.0.1:1/a",
		"AccountKey=" + secret,
		"AccountName=a;AccountKey=" + secret + ";TableEndpoint=::bad",
		"garbage",
	} {
		_, err := New(cs)
		if err == nil {
			t.Errorf("New(%q): no error", cs)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error leaks the key: %v", err)
		}
	}
}

func TestNewDescribesEndpointWithoutCredentials(t *testing.T) {
	b, err := New("DefaultEndpointsProtocol=https;AccountName=acct;SharedAccessSignature=sv=2019&sig=SECRET;EndpointSuffix=core.windows.net")
	if err != nil {
		t.Fatal(err)
	}
	info := b.Info()
	if info.Endpoint != "https://acct.table.core.windows.net" || info.Driver != DriverName || info.APIVersion != APIVersion {
		t.Errorf("info = %+v", info)
	}
	if bytes.Contains([]byte(info.Endpoint), []byte("SECRET")) {
		t.Error("endpoint holds the signature")
	}
}

func TestTopClampsToInt32(t *testing.T) {
	if top(0) != nil || *top(5) != 5 || *top(1 << 40) != 1<<31-1 || *top(-1) != -1 {
		t.Error("top conversion")
	}
}
