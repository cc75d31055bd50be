package driver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// ErrNotExpressible is wrapped by a driver's error for a request its client cannot send
// (aztables v1.4.1 has no $select on Get Entity, no retrieve inside a transaction and no
// empty PartitionKey on a point operation). Such an error says nothing about the backend:
// the report shows the spec as skipped for that driver, never as the backend's failure or
// error (EVIDENCE.md 12: a spec must never blame a backend for what the client did). Its text
// is the marker the report looks for in a failure message.
var ErrNotExpressible = errors.New("conform:not-expressible")

// Error is a backend's refusal as specs inspect it; see spec.Error.
type Error = spec.Error

// Info describes a backend for reports. Endpoint never holds a credential.
type Info struct {
	// Name is the backend's name as the user chose it ("reference", "azurite", "cosmos").
	Name string `json:"name"`
	// Kind is the implementation: "reference", "reference-http", "azurite", "endpoint".
	Kind string `json:"kind"`
	// Version is the implementation's version (Azurite's package version, a Server header).
	Version string `json:"version,omitempty"`
	// Endpoint is the table endpoint without credentials; empty for in-process backends.
	Endpoint string `json:"endpoint,omitempty"`
	// Driver is how conform talks to it: "inproc", "rest" or "sdk".
	Driver string `json:"driver"`
	// APIVersion is the x-ms-version sent.
	APIVersion string `json:"apiVersion,omitempty"`
}

// Describer is implemented by backends that can describe themselves.
type Describer interface {
	Info() Info
}

// Capability names an optional capability a spec may require.
type Capability string

// The optional capabilities. A spec that needs one is skipped, with the reason, on a
// backend without it.
const (
	// CapSAS: the backend can issue service SAS tokens and be driven through them.
	CapSAS Capability = "sas"
	// CapRawHTTP: the backend speaks HTTP and accepts hand-made requests.
	CapRawHTTP Capability = "raw-http"
)

// SASOptions describes a service SAS for one table (EVIDENCE.md 7.2).
type SASOptions struct {
	Table       string
	Permissions string // any of "raud", in that order
	Start       time.Time
	Expiry      time.Time
	StartPK     string
	StartRK     string
	EndPK       string
	EndRK       string
	// Identifier (si) names a stored access policy of the table; the fields the SAS leaves
	// out (Permissions, Start, Expiry) come from it.
	Identifier string
	// IPRange (sip) is one IPv4 address or two joined by "-"; Protocol (spr) is "https" or
	// "https,http".
	IPRange  string
	Protocol string
}

// AccountSASOptions describes an account SAS (EVIDENCE.md, E-account-sas).
type AccountSASOptions struct {
	Services      string // ss: any of "bfqt"; t is the Table service
	ResourceTypes string // srt: any of "sco" (service, container = table, object = entity)
	Permissions   string // sp: any of "rwdlacup"
	Start         time.Time
	Expiry        time.Time
	IPRange       string
	Protocol      string
	// Version is the sv signed; empty means the driver's default.
	Version string
}

// SASIssuer is implemented by backends that can sign a service or account SAS with their
// account key and return an api.Backend that authenticates with that SAS alone.
type SASIssuer interface {
	WithSAS(ctx context.Context, opts SASOptions) (api.Backend, error)
	WithAccountSAS(ctx context.Context, opts AccountSASOptions) (api.Backend, error)
}

// RawHTTP is implemented by backends reached over HTTP. NewRequest builds a request for a
// path relative to the table endpoint (e.g. "Tables" or "mytable(PartitionKey='a',RowKey='b')"),
// and Do signs it with the backend's credentials and sends it.
type RawHTTP interface {
	NewRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error)
	Do(req *http.Request) (*http.Response, error)
}

// Has reports whether b offers capability c.
func Has(b api.Backend, c Capability) bool {
	switch c {
	case CapSAS:
		_, ok := b.(SASIssuer)
		return ok
	case CapRawHTTP:
		_, ok := b.(RawHTTP)
		return ok
	}
	return false
}

// AsError returns err as a service error, if it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// IsTransport reports whether err is a transport failure: no answer came back (a dropped
// connection, a timeout). A service error (*Error) and an answer the driver could not read
// (*MalformedAnswerError) are answers of the backend, not transport failures; nor is a
// request the driver cannot send (ErrNotExpressible).
func IsTransport(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := AsError(err); ok {
		return false
	}
	var m *MalformedAnswerError
	return !errors.As(err, &m) && !errors.Is(err, ErrNotExpressible)
}

// MaxMalformedEvidence bounds the bytes of an unreadable answer kept as evidence.
const MaxMalformedEvidence = 2 << 10

// MalformedAnswerError is an answer the backend sent that the driver cannot read as the
// protocol says: a status the operation never answers, a body that does not decode. It is
// the backend's answer, so a spec that meets one fails the rule it checks (with the
// backend's actual status and bytes as evidence): it is never a transport error, and never
// turned into a service error the backend did not send.
type MalformedAnswerError struct {
	Op     string
	Status int
	// Body is the start of the answer's body, at most MaxMalformedEvidence bytes.
	Body []byte
	// Err says what could not be read; nil for a status the operation never answers. It
	// is text only: a decoder's service-shaped error (a 400 of the codec) must never pass
	// for the backend's answer, so it is not unwrapped.
	Err error
}

// NewMalformedAnswer returns the error for an unreadable answer of op, keeping at most
// MaxMalformedEvidence bytes of body.
func NewMalformedAnswer(op string, status int, body []byte, err error) *MalformedAnswerError {
	if len(body) > MaxMalformedEvidence {
		body = body[:MaxMalformedEvidence]
	}
	if err != nil {
		err = errors.New(err.Error())
	}
	return &MalformedAnswerError{Op: op, Status: status, Body: append([]byte(nil), body...), Err: err}
}

func (e *MalformedAnswerError) Error() string {
	what := "unexpected status"
	if e.Err != nil {
		what = "unreadable answer: " + e.Err.Error()
	}
	return fmt.Sprintf("malformed answer to %s: status %d, %s; body %q", e.Op, e.Status, what, e.Body)
}

// AsMalformed returns err as an unreadable answer, if it is one.
func AsMalformed(err error) (*MalformedAnswerError, bool) {
	var m *MalformedAnswerError
	if errors.As(err, &m) {
		return m, true
	}
	return nil, false
}

// TransportError is a failure to get or understand a service's answer: a dropped
// connection, a timeout, an unparsable body. Reports show it as an error, not as a rule
// failure. Remote drivers wrap every non-service failure in it.
type TransportError struct {
	Op  string
	Err error
}

func (e *TransportError) Error() string { return "transport error: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *TransportError) Unwrap() error { return e.Err }
