package rest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver"
)

// DriverName is the name of this driver in driver.Info.
const DriverName = "rest"

// DefaultTimeout bounds one HTTP exchange when the caller's context has no earlier deadline.
const DefaultTimeout = 30 * time.Second

// maxResponseBytes bounds how much of an answer is read (a 1000-entity page of 1 MiB
// entities would not fit, but no service answers more than 4 MiB per page; CLIM).
const maxResponseBytes = 64 << 20

// Backend is an api.Backend over the raw Table REST protocol. It is safe for concurrent use.
type Backend struct {
	cs       wire.ConnectionString
	endpoint *url.URL // the table endpoint, path without a trailing slash
	client   *http.Client
	scheme   wire.AuthScheme
	level    wire.Metadata
	merge    string
	sas      url.Values // set when the backend authenticates with a SAS only
	info     driver.Info
	basePath string  // the endpoint's escaped path without a trailing slash
	direct   *direct // nil when operations go through client

	versionOnce sync.Once
	versionMu   sync.Mutex
	version     string
}

var (
	_ api.Backend      = (*Backend)(nil)
	_ driver.Describer = (*Backend)(nil)
	_ driver.RawHTTP   = (*Backend)(nil)
	_ driver.SASIssuer = (*Backend)(nil)
)

// Option configures New.
type Option func(*config)

type config struct {
	client  *http.Client
	timeout time.Duration
	scheme  wire.AuthScheme
	level   wire.Metadata
	merge   string
	info    driver.Info
	direct  bool
}

// WithHTTPClient sends requests through c instead of the driver's own client.
func WithHTTPClient(c *http.Client) Option { return func(o *config) { o.client = c } }

// WithDirectSender sends the api.Backend operations with the hand-written sender of
// direct.go where it can (see the package documentation) instead of net/http. It is for
// load runs: conformance verdicts go through net/http, whose behaviour behind proxies and
// load balancers is the one applications see.
func WithDirectSender() Option { return func(o *config) { o.direct = true } }

// WithTimeout bounds one HTTP exchange of the driver's own client (default DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(o *config) { o.timeout = d } }

// WithMetadata sets the metadata level asked for in Accept (default minimal metadata).
// Answers are decoded by type annotations where present and by JSON shape otherwise, so at
// no metadata Int64, DateTime, Guid and Binary values come back as strings.
func WithMetadata(level wire.Metadata) Option { return func(o *config) { o.level = level } }

// WithSharedKeyLite signs with Shared Key Lite (as the Go SDK does) instead of Shared Key.
func WithSharedKeyLite() Option { return func(o *config) { o.scheme = wire.SharedKeyLite } }

// WithMergeVerb chooses how Merge is sent: "MERGE" (default), "PATCH", or "POST" with
// X-HTTP-Method: MERGE (as SDKs do for Cosmos, EVIDENCE.md 8).
func WithMergeVerb(verb string) Option { return func(o *config) { o.merge = strings.ToUpper(verb) } }

// WithInfo sets the Name, Kind and Version reported by Info; Driver, Endpoint and
// APIVersion are always this driver's own. Kind defaults to "endpoint".
func WithInfo(info driver.Info) Option { return func(o *config) { o.info = info } }

// NewTransport returns the Transport of the driver's own http.Client (RawHTTP requests, SAS
// credentials, https endpoints and bodies over 64 KiB; other operations go direct, see
// the package documentation): keep-alive with room for many idle connections per host
// (load runs), dial, TLS and header timeouts.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: DefaultTimeout,
		ExpectContinueTimeout: time.Second,
	}
}

// New connects to the account of connectionString (see wire.ParseConnectionString). It
// authenticates with the account key (Shared Key, or Shared Key Lite by option) or else with
// the connection string's SAS. No request is sent. Errors never contain a secret.
func New(connectionString string, opts ...Option) (*Backend, error) {
	cfg := config{timeout: DefaultTimeout, merge: "MERGE"}
	for _, o := range opts {
		o(&cfg)
	}
	cs, err := wire.ParseConnectionString(connectionString)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	switch cfg.merge {
	case "MERGE", "PATCH", "POST":
	default:
		return nil, fmt.Errorf("rest: merge verb %q is not MERGE, PATCH or POST", cfg.merge)
	}
	u, err := url.Parse(cs.TableEndpoint)
	if err != nil {
		return nil, fmt.Errorf("rest: table endpoint: %w", err)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	b := &Backend{cs: cs, endpoint: u, client: cfg.client, scheme: cfg.scheme, level: cfg.level, merge: cfg.merge,
		basePath: strings.TrimSuffix(u.EscapedPath(), "/")}
	if b.client == nil {
		tr := NewTransport()
		if cs.AccountKey != nil && cfg.direct {
			if b.direct = newDirect(u); b.direct != nil {
				b.direct.timeout = cfg.timeout
			}
		}
		if b.direct != nil {
			// Beside the direct sender the Transport carries few requests (large batches,
			// RawHTTP), so its connections can sit idle as long as a load's timed phase;
			// they are dropped before a server's idle timeout could close one as it is
			// reused (see maxIdleReuse).
			tr.IdleConnTimeout = maxIdleReuse
		}
		b.client = &http.Client{Transport: tr, Timeout: cfg.timeout}
	}
	if cs.AccountKey == nil {
		if b.sas, err = url.ParseQuery(cs.SAS); err != nil {
			return nil, fmt.Errorf("rest: SharedAccessSignature is not a query string")
		}
	}
	b.info = cfg.info
	if b.info.Name == "" {
		b.info.Name = "endpoint"
	}
	if b.info.Kind == "" {
		b.info.Kind = "endpoint"
	}
	b.info.Driver, b.info.Endpoint, b.info.APIVersion = DriverName, cs.TableEndpoint, spec.APIVersion
	return b, nil
}

// Info describes the backend. Version is the Server header of the first answer, once one
// came back (and the version from WithInfo until then).
func (b *Backend) Info() driver.Info {
	info := b.info
	b.versionMu.Lock()
	if b.version != "" {
		info.Version = b.version
	}
	b.versionMu.Unlock()
	return info
}

// ConnectionString returns the parsed connection string (its String form is redacted).
func (b *Backend) ConnectionString() wire.ConnectionString { return b.cs }

// serviceURL is the endpoint with a trailing slash, as odata.metadata and batch URLs use it.
func (b *Backend) serviceURL() string { return b.endpoint.String() + "/" }

// NewRequest builds a request for path relative to the table endpoint ("Tables",
// "t(PartitionKey='a',RowKey='b')", "t()?$top=1"), with the protocol's default headers
// (x-ms-version, DataServiceVersion, MaxDataServiceVersion, Accept, and Content-Type when
// there is a body). Callers may change any header before Do; Do only adds credentials.
func (b *Backend) NewRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	p, rawQuery, _ := strings.Cut(path, "?")
	u := *b.endpoint
	u.RawPath = ""
	full := strings.TrimSuffix(b.endpoint.EscapedPath(), "/") + "/" + strings.TrimPrefix(p, "/")
	unescaped, err := url.PathUnescape(full)
	if err != nil {
		return nil, fmt.Errorf("rest: path %q: %w", path, err)
	}
	u.Path, u.RawPath = unescaped, full
	u.RawQuery = rawQuery
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	req.URL.RawPath = full // keep the escaping exactly as built: it is what gets signed
	h := req.Header
	h.Set(wire.KeyVersion, spec.APIVersion)
	h.Set(wire.KeyDataSvcVersion, "3.0")
	h.Set(wire.KeyMaxDataSvcVer, "3.0;NetFx")
	h.Set(wire.HeaderAccept, b.level.Accept())
	if body != nil {
		h.Set(wire.HeaderContentType, wire.ContentTypeJSON)
	}
	return req, nil
}

// Do sends req with the backend's credentials: a Shared Key signature (x-ms-date set to now
// when no date is given) unless the request already carries Authorization, or the SAS
// parameters added to the query. A client request id is added when missing.
func (b *Backend) Do(req *http.Request) (*http.Response, error) {
	if req.Header.Get(wire.KeyClientRequestID) == "" {
		req.Header.Set(wire.KeyClientRequestID, wire.NewID())
	}
	if b.sas != nil {
		q := req.URL.Query()
		for k, vs := range b.sas {
			if !q.Has(k) {
				q[k] = vs
			}
		}
		req.URL.RawQuery = q.Encode()
	} else if req.Header.Get(wire.HeaderAuthorization) == "" {
		wire.SignRequest(req, b.scheme, b.cs.AccountName, b.cs.AccountKey, time.Now())
	}
	ExpectContinue(req)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("rest: %s %s: %w", req.Method, redactedURL(req.URL), err)
	}
	b.versionOnce.Do(func() {
		b.versionMu.Lock()
		b.version = resp.Header.Get("Server")
		b.versionMu.Unlock()
	})
	return resp, nil
}

// Bodies of this size range are sent with Expect: 100-continue, so that the body is sent
// only once the server asks for it. Go's server closes a request's body once its handler
// starts answering (golang/go#15527), and Go's reverse proxy, still copying a body larger
// than its 4 KiB write buffer upstream when the answer arrives, then drops its upstream
// connection in the middle of that answer (golang/go#40747): a fast server behind such a
// proxy loses answers to requests it has answered. Waiting for 100 Continue orders the
// exchange. Bodies under 2 KiB fit any buffer; over 4 MiB the service refuses anyway.
const (
	minExpectContinueBody = 2 << 10
	maxExpectContinueBody = 4 << 20
)

// ExpectContinue adds Expect: 100-continue to a request whose body is in the range above,
// unless it has an Expect header. The sending Transport must have an
// ExpectContinueTimeout (NewTransport's is one second).
func ExpectContinue(req *http.Request) {
	if n := req.ContentLength; n >= minExpectContinueBody && n <= maxExpectContinueBody {
		if _, set := req.Header["Expect"]; !set {
			req.Header.Set("Expect", "100-continue")
		}
	}
}

func redactedURL(u *url.URL) string {
	c := *u
	if q := c.Query(); q.Has("sig") {
		q.Set("sig", "REDACTED")
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// answer is a read response; its headers are read with get, or as an http.Header with
// httpHeader.
type answer struct {
	status int
	header http.Header  // the answer's header, unless direct holds it
	direct directAnswer // set when the direct sender read the answer
	body   []byte
}

func (a *answer) get(name string) string {
	if a.header != nil {
		return a.header.Get(name)
	}
	return a.direct.get(name)
}

func (a *answer) httpHeader() http.Header {
	if a.header != nil {
		return a.header
	}
	return a.direct.httpHeader()
}

// exchange builds, sends and reads one request. An answer of 400 or more comes back as a
// *spec.Error; anything that prevents an answer is a transport error.
func (b *Backend) exchange(ctx context.Context, method, path string, body []byte, header map[string]string) (answer, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	if b.direct != nil && len(body) <= maxDirectBody {
		return b.exchangeDirect(ctx, method, path, body, header)
	}
	req, err := b.NewRequest(ctx, method, path, body)
	if err != nil {
		return answer{}, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	data, err := readAnswer(resp.Body, resp.ContentLength)
	if err != nil {
		return answer{}, fmt.Errorf("rest: %s %s: reading the answer: %w", method, path, err)
	}
	if len(data) > maxResponseBytes {
		return answer{}, fmt.Errorf("rest: %s %s: answer larger than %d bytes", method, path, maxResponseBytes)
	}
	if resp.StatusCode >= 400 {
		return answer{}, decodeError(resp.StatusCode, resp.Header, data)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// exchangeDirect is exchange over b.direct: the same request (NewRequest's headers, then
// header, then Do's client request id, date and Shared Key signature), without an
// http.Request.
func (b *Backend) exchangeDirect(ctx context.Context, method, path string, body []byte, header map[string]string) (answer, error) {
	escapedPath, rawQuery, err := b.target(path)
	if err != nil {
		return answer{}, err
	}
	var fields [12]headerField
	hf := append(fields[:0],
		headerField{wire.KeyVersion, spec.APIVersion},
		headerField{wire.KeyDataSvcVersion, "3.0"},
		headerField{wire.KeyMaxDataSvcVer, "3.0;NetFx"},
		headerField{wire.HeaderAccept, b.level.Accept()})
	if body != nil {
		hf = append(hf, headerField{wire.HeaderContentType, wire.ContentTypeJSON})
	}
	for k, v := range header {
		hf = setField(hf, http.CanonicalHeaderKey(k), v)
	}
	if field(hf, wire.KeyClientRequestID) == "" {
		hf = setField(hf, wire.KeyClientRequestID, wire.NewID())
	}
	if field(hf, wire.HeaderAuthorization) == "" {
		date := field(hf, wire.KeyMSDate)
		if date == "" {
			date = field(hf, wire.HeaderDate)
		}
		if date == "" {
			date = wire.HTTPDate(time.Now())
			hf = setField(hf, wire.KeyMSDate, date)
		}
		var auth [128]byte
		hf = setField(hf, wire.HeaderAuthorization, string(wire.AppendSharedKeyAuthorization(auth[:0], b.scheme, b.cs.AccountName, b.cs.AccountKey,
			method, field(hf, wire.KeyContentMD5), field(hf, wire.HeaderContentType), date, escapedPath, rawQuery)))
	}
	r := directRequest{method: method, requestURI: escapedPath, header: hf, body: body}
	if rawQuery != "" {
		r.requestURI += "?" + rawQuery
	}
	da, err := b.direct.roundTrip(ctx, &r)
	if err != nil {
		return answer{}, fmt.Errorf("rest: %s %s://%s%s: %w", method, b.endpoint.Scheme, b.endpoint.Host, escapedPath, err)
	}
	b.versionOnce.Do(func() {
		b.versionMu.Lock()
		b.version = da.get("Server")
		b.versionMu.Unlock()
	})
	if da.status >= 400 {
		return answer{}, decodeError(da.status, da.httpHeader(), da.body)
	}
	return answer{status: da.status, header: da.header, direct: da, body: da.body}, nil
}

// target is the escaped path (as NewRequest sends and signs it) and the raw query of path.
func (b *Backend) target(path string) (escapedPath, rawQuery string, err error) {
	p, rawQuery, _ := strings.Cut(path, "?")
	full := b.basePath + "/" + strings.TrimPrefix(p, "/")
	unescaped, err := url.PathUnescape(full)
	if err != nil {
		return "", "", fmt.Errorf("rest: path %q: %w", path, err)
	}
	u := url.URL{Path: unescaped, RawPath: full}
	return u.EscapedPath(), rawQuery, nil
}

// readAnswer reads an answer's body to its end (so that the connection is reused), at most
// maxResponseBytes+1 bytes, into one buffer sized by the Content-Length when there is one.
func readAnswer(body io.Reader, contentLength int64) ([]byte, error) {
	var buf bytes.Buffer
	if contentLength >= 0 && contentLength <= maxResponseBytes {
		buf.Grow(int(contentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(io.LimitReader(body, maxResponseBytes+1))
	return buf.Bytes(), err
}

// protocolError is a decoding failure of an answer: a *driver.MalformedAnswerError with
// the backend's status and the start of its body, never a *spec.Error, because the service
// did not send it as one (api.Backend contract).
func protocolError(op string, a answer, err error) error {
	return driver.NewMalformedAnswer(op, a.status, a.body, err)
}

func unexpected(op string, a answer, want ...int) error {
	for _, w := range want {
		if a.status == w {
			return nil
		}
	}
	return driver.NewMalformedAnswer(op, a.status, a.body, nil)
}

// decodeError is the service error an error answer holds (wire.DecodeError), with every
// secret its message quotes masked: Azure's answer to a wrong key quotes the request's
// Shared Key signature, and the message goes into failures, logs and reports.
func decodeError(status int, h http.Header, body []byte) *spec.Error {
	e := wire.DecodeError(status, h, body)
	e.Message = driver.MaskSecrets(e.Message)
	return e
}
