package service

import (
	"net/http"
	"testing"
)

// TestAnswerCodeReadsTheBodyWithoutTheHeader: the code of an ACL error is the header's, or
// the XML body's where the header is missing (whose absence is protocol.error.code-header's
// subject, not that of the rule a spec judges).
func TestAnswerCodeReadsTheBodyWithoutTheHeader(t *testing.T) {
	body := []byte(`<?xml version="1.0" encoding="utf-8"?><m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><m:code>ResourceNotFound</m:code><m:message xml:lang="en-US">The specified resource does not exist.</m:message></m:error>`)
	for _, c := range []struct {
		name   string
		header http.Header
		body   []byte
		want   string
	}{
		{"header and body", http.Header{"X-Ms-Error-Code": {"TableNotFound"}}, body, "TableNotFound"},
		{"body only, OData form", http.Header{}, body, "ResourceNotFound"},
		{"body only, Storage form", http.Header{}, []byte(`<Error><Code>InvalidXmlDocument</Code><Message>x</Message></Error>`), "InvalidXmlDocument"},
		{"neither", http.Header{}, nil, ""},
	} {
		if got := (answer{header: c.header, body: c.body}).code(); got != c.want {
			t.Errorf("%s: code() = %q, want %q", c.name, got, c.want)
		}
	}
}
