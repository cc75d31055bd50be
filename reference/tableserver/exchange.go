package tableserver

import (
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// exchange is one request being answered.
type exchange struct {
	s   *Server
	w   http.ResponseWriter
	r   *http.Request
	id  string
	now time.Time // the server's clock (WithClock) when the request arrived
	// received is the real time the request arrived, from which its body's pace is
	// reckoned.
	received time.Time
	// header is w.Header(), the one map of the answer's header fields.
	header  http.Header
	query   url.Values // read-only: it may be shared with other requests (queryCache)
	accept  string     // the request's Accept
	level   wire.Metadata
	jsonErr bool
	// prefixedXMLErr: an XML error is written in the m: prefixed form, as Storage answers
	// the account's XML resources (E-acl-error-xml).
	prefixedXMLErr bool
	wrote          bool

	account   string
	accountOf *account    // what the server holds for account
	backend   api.Backend // the account's
	pathStyle bool
	secondary bool // addressed as <account>-secondary
	sas       *wire.SAS
	acctSAS   *wire.AccountSAS
	// baseURL is serviceURL's answer once asked: the account and its addressing are
	// settled by resolve, before anything names a URL.
	baseURL string

	// values holds the values of the answer's header fields that setHeader set, so that
	// setting one allocates nothing; each field's value slice is one capped element of it.
	values  [headerSlots]string
	nvalues int
	// deadline is the context of the backend work (context), kept here so that it needs
	// no allocation of its own; deadlineUsed says that context handed it out.
	deadline     deadlineContext
	deadlineUsed bool
	detached     detachedContext // the parent of deadline
	// unbounded is the body of unknown length under the bound of r.Body, from which a
	// refused body is drained (drainUnreadBody).
	unbounded io.ReadCloser
	// paced is the request's body, read at a minimum rate (pace.go).
	paced pacedBody
}

// headerSlots is how many header values an exchange holds without allocating: the six of
// every answer and those an entity answer adds.
const headerSlots = 14

// setHeader sets the header field key, which must be in canonical form (wire.Key*,
// http.CanonicalHeaderKey), to v as Header().Set does, without allocating its value slice.
// The slice is capped, so that an Add elsewhere copies instead of overwriting a neighbour.
func (x *exchange) setHeader(key, v string) {
	if x.nvalues == len(x.values) {
		x.header.Set(key, v)
		return
	}
	i := x.nvalues
	x.nvalues++
	x.values[i] = v
	x.header[key] = x.values[i : i+1 : i+1]
}

// ServeHTTP answers one request. Nothing a client sends makes it panic, hang or answer 5xx;
// the recover here is a last guard that answers 500 InternalError and counts the event.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{s: s, w: w, r: r, id: newRequestID(), received: time.Now(), header: w.Header()}
	if s.realClock {
		x.now = x.received
	} else {
		x.now = s.now()
	}
	if s.maxInflight > 0 {
		if !s.enter() {
			s.busy.Add(1)
			x.w.Header().Set(wire.KeyRequestID, x.id)
			x.w.Header().Set("Retry-After", "1")
			x.w.Header().Set("Connection", "close")
			x.fail(spec.ErrServerBusy.New())
			return
		}
		defer s.inflight.Add(-1)
	}
	if x.r.Body != nil && x.r.Body != http.NoBody {
		x.paced = pacedBody{body: x.r.Body, w: w, s: s, counted: s.maxInflight > 0, start: x.received, http1: r.ProtoMajor == 1}
		x.r.Body = &x.paced
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v) // an answer cut off on purpose (writeEntitySet)
			}
			s.recovered.Add(1)
			if !x.wrote {
				x.fail(spec.ErrInternalError.New())
			}
		}
	}()
	x.serve()
}

func (x *exchange) serve() {
	h := x.header
	// The headers of every answer.
	x.setHeader(wire.KeyRequestID, x.id)
	version, versionOK := answerVersion(x.r.Header[wire.KeyVersion])
	x.setHeader(wire.KeyVersion, version)
	x.setHeader("Date", httpDate(x.now))
	x.setHeader("Server", ServerHeader)
	x.setHeader("Cache-Control", "no-cache")
	x.setHeader("X-Content-Type-Options", "nosniff")
	x.accept = wire.FirstValue(x.r.Header, wire.HeaderAccept)
	x.jsonErr = wire.WantsJSONError(x.accept, "")

	var q url.Values // nil, which reads as empty, when there is no query
	if raw := x.r.URL.RawQuery; raw != "" {
		var err error
		if q, err = x.s.queries.parse(raw); err != nil { // read-only
			x.fail(spec.ErrInvalidQueryParameter.New())
			return
		}
		x.jsonErr = wire.WantsJSONError(x.accept, q.Get("$format"))
	}
	x.query = q
	if len(x.r.TransferEncoding) > 0 && framedTwice(x.r) {
		// RFC 9112 6.3: a request with both Content-Length and Transfer-Encoding is read by its
		// Transfer-Encoding, and the connection is closed after the answer, since a proxy in
		// front may have framed it by its Content-Length.
		x.setHeader("Connection", "close")
	}
	if ids := x.r.Header[wire.KeyClientRequestID]; len(ids) > 0 {
		if len(ids) > 1 || !visibleASCII(ids[0], spec.MaxClientRequestIDLength) {
			x.fail(spec.ErrInvalidHeaderValue.Newf("The value of x-ms-client-request-id is not valid."))
			return
		}
		h[wire.KeyClientRequestID] = ids[:1:1] // shared with the request, which nothing changes
	}
	if !versionOK {
		// Storage validates x-ms-version (EVIDENCE.md 13, E-version-invalid).
		x.fail(spec.ErrInvalidHeaderValue.Newf("The value for the header x-ms-version is not in the correct format."))
		return
	}
	if x.r.ContentLength > spec.MaxRequestBodyBytes {
		x.fail(spec.ErrRequestBodyTooLarge.New())
		return
	}
	if x.r.Body != http.NoBody && x.r.ContentLength < 0 {
		// A body of unknown length is bounded as it is read; one of known length is read
		// with a bound (readBodyInto) and is no longer than its Content-Length.
		x.unbounded = x.r.Body
		x.r.Body = http.MaxBytesReader(x.w, x.r.Body, spec.MaxRequestBodyBytes)
	}

	escapedPath := rawPath(x.r)
	res, err := x.resolve(escapedPath)
	if err != nil {
		x.fail(err)
		return
	}
	if x.r.Method == http.MethodOptions {
		x.preflight()
		return
	}
	x.setCORSHeaders()
	if err := x.authenticate(escapedPath); err != nil {
		x.fail(err)
		return
	}
	method, err := x.effectiveMethod()
	if err != nil {
		x.fail(err)
		return
	}
	x.route(method, res)
}
