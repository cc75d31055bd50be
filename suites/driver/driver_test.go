package driver

import (
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/spec"
)

// An answer the driver cannot read is the backend's answer, with its status and bytes: it
// is neither a transport error nor a service error the backend did not send (the codec's
// own 400 must not pass for the backend's; issue 11).
func TestMalformedAnswerIsNeitherTransportNorServiceError(t *testing.T) {
	body := []byte(`{"PartitionKey":"p","RowKey":"r","a` + "\x01" + `":1}` + strings.Repeat(" ", 3000))
	err := error(NewMalformedAnswer("insert entity", 201, body, spec.ErrInvalidInput.Newf("The JSON payload is not valid.")))
	if _, ok := AsError(err); ok {
		t.Fatal("a decoding failure reads as a service error")
	}
	if IsTransport(err) {
		t.Fatal("a decoding failure reads as a transport error")
	}
	m, ok := AsMalformed(err)
	if !ok || m.Status != 201 || len(m.Body) != MaxMalformedEvidence {
		t.Fatalf("malformed answer %+v", m)
	}
	if !strings.Contains(err.Error(), "status 201") {
		t.Fatalf("message %q", err.Error())
	}
}
