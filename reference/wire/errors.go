package wire

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/spec"
)

// ErrorMessage is the text of an error answer: the message, prefixed with "N:" for a failed
// batch operation at index N, then "\nRequestId:<id>\nTime:<7-digit UTC time>" as Storage
// writes it (EVIDENCE.md 5.1, 4).
func ErrorMessage(e *spec.Error, requestID string, now time.Time) string {
	msg := e.Message
	if e.Indexed {
		msg = strconv.Itoa(e.FailedIndex) + ":" + msg
	}
	return msg + "\nRequestId:" + requestID + "\nTime:" + now.UTC().Format("2006-01-02T15:04:05.0000000Z")
}

// EncodeErrorJSON renders `{"odata.error":{"code":..,"message":{"lang":"en-US","value":..}}}`.
func EncodeErrorJSON(e *spec.Error, requestID string, now time.Time) []byte {
	b := []byte(`{"odata.error":{"code":`)
	b = appendString(b, e.Code)
	b = append(b, `,"message":{"lang":"en-US","value":`...)
	b = appendString(b, ErrorMessage(e, requestID, now))
	return append(b, `}}}`...)
}

// XMLErrorNamespace is the namespace of the XML error body of the Table service.
const XMLErrorNamespace = "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"

// EncodeErrorXML renders the XML error body Storage answers to an entity or table operation
// when Accept does not ask for JSON (EVIDENCE.md 5.1): unprefixed elements in the metadata
// namespace.
func EncodeErrorXML(e *spec.Error, requestID string, now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><error xmlns="` + XMLErrorNamespace + `"><code>`)
	_ = xml.EscapeText(&b, []byte(e.Code))
	b.WriteString(`</code><message xml:lang="en-US">`)
	_ = xml.EscapeText(&b, []byte(ErrorMessage(e, requestID, now)))
	b.WriteString(`</message></error>`)
	return b.Bytes()
}

// EncodeErrorXMLPrefixed renders the XML error body Storage answers to Table ACL requests
// (E-acl-error-xml): the elements in the metadata namespace with the prefix m.
func EncodeErrorXMLPrefixed(e *spec.Error, requestID string, now time.Time) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><m:error xmlns:m="` + XMLErrorNamespace + `"><m:code>`)
	_ = xml.EscapeText(&b, []byte(e.Code))
	b.WriteString(`</m:code><m:message xml:lang="en-US">`)
	_ = xml.EscapeText(&b, []byte(ErrorMessage(e, requestID, now)))
	b.WriteString(`</m:message></m:error>`)
	return b.Bytes()
}

var indexPrefix = regexp.MustCompile(`^(\d{1,9}):`)

// DecodeError reads an error answer into a *spec.Error: the status of the answer, the code
// from x-ms-error-code or else from the body (JSON odata.error, the XML <error> of tables or
// the <Error> of the other storage services), the message without its RequestId/Time
// trailer, the request id from x-ms-request-id or else the trailer, and a leading "N:" batch
// index as FailedIndex.
func DecodeError(status int, h http.Header, body []byte) *spec.Error {
	e := &spec.Error{Status: status, Code: h.Get(HeaderErrorCode), RequestID: h.Get(HeaderRequestID)}
	code, msg := errorBody(body)
	if e.Code == "" {
		e.Code = code
	}
	if i := strings.Index(msg, "\nRequestI"); i >= 0 {
		trailer := msg[i+1:]
		msg = strings.TrimRight(msg[:i], "\n")
		if e.RequestID == "" {
			id, _, _ := strings.Cut(trailer, "\n")
			if _, v, ok := strings.Cut(id, ":"); ok {
				e.RequestID = strings.TrimSpace(v)
			}
		}
	}
	if m := indexPrefix.FindStringSubmatch(msg); m != nil {
		n, err := strconv.Atoi(m[1])
		if err == nil {
			e.FailedIndex, e.Indexed = n, true
			msg = msg[len(m[0]):]
		}
	}
	e.Message = msg
	if e.Code == "" && e.Message == "" {
		e.Message = http.StatusText(status)
	}
	e.RetryAfter = RetryAfter(h, time.Now())
	return e
}

// RetryAfter is the wait an answer asks for before a retry (spec.RetryAfter, which the
// suites' recorder reads too).
func RetryAfter(h http.Header, now time.Time) time.Duration { return spec.RetryAfter(h, now) }

func errorBody(body []byte) (code, msg string) {
	body = bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(body) == 0 {
		return "", ""
	}
	if body[0] == '{' {
		var j struct {
			Err *struct {
				Code    string          `json:"code"`
				Message json.RawMessage `json:"message"`
			} `json:"odata.error"`
		}
		if json.Unmarshal(body, &j) == nil && j.Err != nil {
			var m struct {
				Value string `json:"value"`
			}
			if json.Unmarshal(j.Err.Message, &m) != nil {
				_ = json.Unmarshal(j.Err.Message, &m.Value)
			}
			return j.Err.Code, m.Value
		}
		return "", ""
	}
	if body[0] == '<' {
		var x struct {
			XMLName  xml.Name
			Code     string `xml:"code"`
			Message  string `xml:"message"`
			CodeU    string `xml:"Code"`
			MessageU string `xml:"Message"`
		}
		if xml.Unmarshal(body, &x) == nil {
			if x.Code == "" {
				x.Code, x.Message = x.CodeU, x.MessageU
			}
			return x.Code, x.Message
		}
	}
	return "", ""
}
