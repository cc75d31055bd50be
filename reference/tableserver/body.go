package tableserver

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// maxBodyRoom is the most readBodyInto makes room for before a body's bytes arrive.
const maxBodyRoom = 64 << 10

// readBody reads the bounded body: over spec.MaxRequestBodyBytes fails with 413
// RequestBodyTooLarge.
func (x *exchange) readBody() ([]byte, error) {
	return x.readBodyInto(nil)
}

// readBodyInto appends the body to b, at most spec.MaxRequestBodyBytes of it (413
// RequestBodyTooLarge past that), and closes it once it is read to its end, which spares
// net/http reading it again after the answer.
func (x *exchange) readBodyInto(b []byte) ([]byte, error) {
	if x.r.Body == nil || x.r.Body == http.NoBody {
		return b, nil
	}
	if n := x.r.ContentLength; n > 0 && n <= spec.MaxRequestBodyBytes {
		// Room for the read that finds the end; a large body's room grows as its bytes
		// arrive, so that a declared length alone holds no memory.
		b = slices.Grow(b, int(min(n, maxBodyRoom))+1)
	}
	start := len(b)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := x.r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)-start) > spec.MaxRequestBodyBytes {
			return b, spec.ErrRequestBodyTooLarge.New()
		}
		if err == io.EOF {
			_ = x.r.Body.Close()
			return b, nil
		}
		if err != nil {
			return b, bodyError(err)
		}
	}
}

func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return spec.ErrRequestBodyTooLarge.New()
	}
	var slow *bodyTooSlow
	if errors.As(err, &slow) {
		return spec.ErrInvalidInput.Newf("The request body arrived more slowly than %d bytes per second.", slow.rate)
	}
	return spec.ErrInvalidInput.Newf("The request body could not be read.")
}

// decodeBody reads the bounded body as readBody does, into a pooled buffer that is reused
// once decode returns: decode must keep nothing of the bytes it is given.
func (x *exchange) decodeBody(decode func([]byte) error) error {
	bp := bodyBuffers.Get().(*[]byte)
	b, err := x.readBodyInto((*bp)[:0])
	if err == nil {
		err = decode(b)
	}
	if cap(b) <= maxPooledBody {
		*bp = b[:0]
		bodyBuffers.Put(bp)
	}
	return err
}

// checkJSONContent refuses bodies that say they are not JSON: Atom or XML with 415
// AtomFormatNotSupported (PF), any other media type with 400 InvalidInput. A body without a
// Content-Type is taken as JSON.
func (x *exchange) checkJSONContent() error {
	ct := strings.TrimSpace(wire.FirstValue(x.r.Header, wire.HeaderContentType))
	if strings.HasPrefix(ct, wire.ContentTypeJSON) {
		return nil // as clients write it, in lower case: no lowering needed
	}
	ct = strings.ToLower(ct)
	switch {
	case ct == "", strings.HasPrefix(ct, wire.ContentTypeJSON):
		return nil
	case strings.HasPrefix(ct, wire.ContentTypeAtom), strings.HasPrefix(ct, wire.ContentTypeXML):
		return spec.ErrAtomFormatUnsupported.New()
	}
	return spec.ErrInvalidInput.Newf("The Content-Type %q is not supported; send application/json.", ct)
}

// maxDrainBeforeAnswer is how much of a request body the server reads, and discards,
// before it answers a request it refuses without reading the body (the size net/http's
// server itself reads after a handler returns).
const maxDrainBeforeAnswer = 256 << 10

// maxDrainTooLarge is how much of a body over spec.MaxRequestBodyBytes the server reads,
// and discards, before its 413 when the client sends the body whole without waiting for
// 100 Continue (E-body-too-large-drained): a few times the limit.
const maxDrainTooLarge = 4 * spec.MaxRequestBodyBytes

// drainUnreadBody reads and discards what is left of a body before a refusal. Go's server
// closes a request's body once the answer starts (golang/go#15527); a client or proxy
// still writing that body then loses the answer with the connection (golang/go#40747), and
// a client that sends a large body whole (Python's http.client, the legacy Node SDK) sees a
// broken pipe instead of the 413. A body of up to maxDrainBeforeAnswer is read; a body
// refused as too large (tooLarge) up to maxDrainTooLarge, unless the client asked for
// 100 Continue, which it is then never sent: it does not send the body.
func (x *exchange) drainUnreadBody(tooLarge bool) {
	if x.r.Body == nil || x.r.Body == http.NoBody || x.wrote {
		return
	}
	if tooLarge && !strings.EqualFold(x.r.Header.Get("Expect"), "100-continue") {
		body := x.r.Body
		if x.unbounded != nil {
			body = x.unbounded // the bound has been reached; read past it
		}
		_, _ = io.CopyN(io.Discard, body, maxDrainTooLarge)
		return
	}
	if x.r.ContentLength > maxDrainBeforeAnswer {
		return // a body too large to read whole is not asked for (no 100 Continue)
	}
	_, _ = io.CopyN(io.Discard, x.r.Body, maxDrainBeforeAnswer)
}
