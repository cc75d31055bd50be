package wire

import (
	"net/http"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/spec"
)

// TestPrefixedXMLErrorReadsBack: the m: prefixed form of E-acl-error-xml reads back as the
// same code and message.
func TestPrefixedXMLErrorReadsBack(t *testing.T) {
	body := EncodeErrorXMLPrefixed(spec.ErrResourceNotFound.New(), "id-1", time.Unix(0, 0))
	got := DecodeError(404, http.Header{}, body)
	if got.Code != "ResourceNotFound" || got.Message != spec.ErrResourceNotFound.Message || got.RequestID != "id-1" {
		t.Errorf("read back as %+v from %s", got, body)
	}
}
