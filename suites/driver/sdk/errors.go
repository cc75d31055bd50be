package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver"
)

// ErrUnsupported is returned, wrapped, for a request the aztables SDK cannot express (a
// $select on Get Entity, a retrieve inside a transaction, an empty PartitionKey on Get,
// Update, Merge or Delete). It wraps driver.ErrNotExpressible: it is neither a service
// answer nor a transport failure of the backend, and the report shows the spec as skipped.
var ErrUnsupported = fmt.Errorf("not expressible with aztables v1.4.1 (%w)", driver.ErrNotExpressible)

// refuseEmptyPartitionKey returns the error for op when pk is empty: aztables v1.4.1
// refuses to build the request ("parameter partitionKey cannot be empty"), though the
// service accepts an empty PartitionKey (EVIDENCE.md 1.3).
func refuseEmptyPartitionKey(op, pk string) error {
	if pk != "" {
		return nil
	}
	return mapError(op, fmt.Errorf("an empty PartitionKey is %w", ErrUnsupported))
}

// wire.HeaderRequestID is the service's request id header (EVIDENCE.md 2.1).

// mapError turns what the SDK returned into the api.Backend error contract: a service
// answer becomes *spec.Error, anything else a driver.TransportError naming op.
func mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrUnsupported) {
		return fmt.Errorf("sdk: %s: %w", op, err)
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.RawResponse != nil {
		return responseError(re)
	}
	return &driver.TransportError{Op: "sdk " + op, Err: err}
}

// mapAnswer is mapError for a call whose answer was captured (raw, nil when none came): an
// answer of a success status that the SDK could not read (a body that is not JSON, a
// shape it does not expect) is the backend's answer, unreadable, so it becomes a
// driver.MalformedAnswerError with the status and bytes as evidence, never a transport
// error (a spec that meets one fails the rule it checks).
func mapAnswer(op string, err error, raw *http.Response) error {
	if err == nil || raw == nil || raw.StatusCode >= 300 || noAnswer(err) {
		return mapError(op, err)
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) || errors.Is(err, ErrUnsupported) {
		return mapError(op, err)
	}
	payload, perr := runtime.Payload(raw)
	if perr != nil {
		return &driver.TransportError{Op: "sdk " + op, Err: perr}
	}
	return driver.NewMalformedAnswer("sdk "+op, raw.StatusCode, payload, err)
}

// noAnswer reports whether err says the exchange itself failed (the connection, the
// context), rather than the SDK failing to read an answer that came.
func noAnswer(err error) bool {
	var ne net.Error
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// responseError reads a *azcore.ResponseError into a *spec.Error: the status, the code
// (x-ms-error-code, else the odata.error body), the message without the trailing
// RequestId/Time lines, and the request id (EVIDENCE.md 5.1).
func responseError(re *azcore.ResponseError) *spec.Error {
	resp := re.RawResponse
	body, _ := runtime.Payload(resp)
	code, msg := parseErrorBody(body)
	if re.ErrorCode != "" {
		code = re.ErrorCode
	}
	if h := resp.Header.Get(wire.HeaderErrorCode); h != "" {
		code = h
	}
	e := &spec.Error{Status: re.StatusCode, Code: code, Message: msg, RequestID: resp.Header.Get(wire.HeaderRequestID),
		RetryAfter: wire.RetryAfter(resp.Header, time.Now())}
	if e.Status == 0 {
		e.Status = resp.StatusCode
	}
	return e
}

// parseErrorBody reads the code and message of a JSON odata.error body, or of the XML
// <error> body that some answers carry (EVIDENCE.md 5.1).
func parseErrorBody(body []byte) (code, msg string) {
	body = bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(body) == 0 {
		return "", ""
	}
	if body[0] == '{' {
		var doc struct {
			OData *struct {
				Code    string          `json:"code"`
				Message json.RawMessage `json:"message"`
			} `json:"odata.error"`
		}
		if json.Unmarshal(body, &doc) == nil && doc.OData != nil {
			return doc.OData.Code, cleanMessage(messageText(doc.OData.Message))
		}
		return "", ""
	}
	if m := xmlCode.FindSubmatch(body); m != nil {
		code = string(m[1])
	}
	if m := xmlMessage.FindSubmatch(body); m != nil {
		msg = cleanMessage(string(m[1]))
	}
	return code, msg
}

var (
	xmlCode    = regexp.MustCompile(`<(?:\w+:)?code>\s*([^<\s]+)\s*</(?:\w+:)?code>`)
	xmlMessage = regexp.MustCompile(`(?s)<(?:\w+:)?message[^>]*>(.*?)</(?:\w+:)?message>`)
	indexed    = regexp.MustCompile(`(?s)^(\d+):(.*)$`)
)

// messageText accepts both {"lang":..,"value":..} and a plain string.
func messageText(raw json.RawMessage) string {
	var m struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(raw, &m) == nil && m.Value != "" {
		return m.Value
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// cleanMessage drops the "\nRequestId:...\nTime:..." lines the service appends (Storage
// spells it RequestId, Cosmos RequestID; EVIDENCE.md 5.1).
func cleanMessage(s string) string {
	s = driver.MaskSecrets(s) // Azure's answer to a wrong key quotes the request's signature
	for _, marker := range []string{"\nRequestId:", "\nRequestID:"} {
		if i := strings.Index(s, marker); i >= 0 {
			s = s[:i]
		}
	}
	return strings.TrimRight(s, "\r\n ")
}

// splitIndex separates the "N:" prefix of a failed batch operation's message.
func splitIndex(msg string) (index int, rest string, ok bool) {
	m := indexed.FindStringSubmatch(msg)
	if m == nil {
		return 0, msg, false
	}
	i, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, msg, false
	}
	return i, m[2], true
}

// recovered converts a panic inside the SDK into an error (EVIDENCE.md 12 #11).
func recovered(op string, err *error) {
	if r := recover(); r != nil {
		*err = &driver.TransportError{Op: "sdk " + op, Err: fmt.Errorf("aztables panicked: %v", r)}
	}
}
