package tableserver

import (
	"context"
	"errors"
	"net/http"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// fail answers err: a *spec.Error as the documented error body, anything else (a backend
// fault) as 500 InternalError, a timeout as 500 OperationTimedOut.
func (x *exchange) fail(err error) {
	var se *spec.Error
	switch {
	case errors.As(err, &se):
	case errors.Is(err, context.DeadlineExceeded):
		se = spec.ErrOperationTimedOut.New()
	default:
		se = spec.ErrInternalError.New()
	}
	status := se.Status
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	x.setHeader(wire.KeyErrorCode, se.Code)
	var body []byte
	if x.jsonErr {
		x.setHeader(wire.HeaderContentType, x.level.ContentType())
		body = wire.EncodeErrorJSON(se, x.id, x.now)
	} else if x.prefixedXMLErr {
		x.setHeader(wire.HeaderContentType, wire.ContentTypeXML)
		body = wire.EncodeErrorXMLPrefixed(se, x.id, x.now)
	} else {
		x.setHeader(wire.HeaderContentType, wire.ContentTypeXMLCharset)
		body = wire.EncodeErrorXML(se, x.id, x.now)
	}
	tooLarge := status == http.StatusRequestEntityTooLarge
	if tooLarge {
		x.setHeader("Connection", "close")
	}
	x.drainUnreadBody(tooLarge)
	x.write(status, body)
}
