package tableserver

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// The development account every Server knows (Azurite's well-known account).
const (
	DevAccountName = wire.DevAccountName
	DevAccountKey  = wire.DevAccountKey
)

// ServerHeader is the Server header of every answer.
const ServerHeader = "conform-tableserver/1.0"

// Server is an http.Handler that serves the Table REST protocol over api.Backends, one per
// account: each account is a namespace of its own, as on Azure (E-account-namespace), with
// its own tables, table ACLs and service properties.
type Server struct {
	backends map[string]api.Backend // by account
	keys     map[string][]byte
	// accounts holds each account's key and backend, as keys and backends do once the
	// options are applied: a request finds both with one look-up.
	accounts  map[string]*account
	allowAnon bool
	now       func() time.Time
	// realClock: now is time.Now (no WithClock), so that a request's one reading of the
	// clock serves both its Date and the start of its body's pace.
	realClock bool
	limits    Limits
	// inflight counts the requests being served; past maxInflight (when positive) a
	// request is refused at once.
	inflight    atomic.Int64
	maxInflight int64
	recovered   atomic.Int64
	busy        atomic.Int64

	// caseSensitiveTables: table names are case-sensitive (the Cosmos flavour, whose model is
	// built with reference.WithCaseSensitiveTableNames); set before serving.
	caseSensitiveTables bool

	aclMu sync.Mutex
	acls  map[aclKey][]SignedIdentifier

	serviceURLs atomic.Pointer[map[serviceURLKey]string]
	// lastServiceURL is the kept service URL answered last: a client names the same
	// endpoint on every request, and comparing one key costs less than a look-up.
	lastServiceURL atomic.Pointer[keptURL]
	lastHost       atomic.Pointer[hostForm] // hostOf's latest answer
	queries        *queryCache

	oauth   bool
	propsMu sync.Mutex
	props   map[string]*ServiceProperties // by account

	settingsMu sync.Mutex                // held while ACLs or properties change and are kept
	keepers    map[string]SettingsKeeper // by account (WithSettings)
}

// Option configures a Server.
type Option func(*Server)

// aclKey names one table's ACL: its account and its tableKey.
type aclKey struct{ account, table string }

// tableKey returns the form of a table name under which the server keeps what belongs to
// the table: its lower case, or the name itself when names are case-sensitive.
func (s *Server) tableKey(name string) string {
	if s.caseSensitiveTables {
		return name
	}
	return strings.ToLower(name)
}

// sameTable reports whether a and b name the same table. A service SAS is not matched by it:
// its signature covers the lower-case name (wire.SAS.StringToSign), so it cannot tell
// spellings apart and grants its table in any case, under either flavour.
func (s *Server) sameTable(a, b string) bool {
	if s.caseSensitiveTables {
		return a == b
	}
	return strings.EqualFold(a, b)
}

// WithAccount adds an account, its (decoded) key and the backend that holds its tables
// (give each account a backend of its own for separate namespaces). Requests name it in the path (`/name/Tables`) or as the
// first label of the Host (`name.table.core.windows.net`, `name.table.localhost`).
func WithAccount(name string, key []byte, backend api.Backend) Option {
	return func(s *Server) {
		s.keys[name] = append([]byte(nil), key...)
		s.backends[name] = backend
	}
}

// WithAllowAnonymous lets requests without credentials through (they are refused with 403
// AuthorizationFailure otherwise).
func WithAllowAnonymous() Option { return func(s *Server) { s.allowAnon = true } }

// WithClock sets the clock used for Date headers and signature validity.
func WithClock(now func() time.Time) Option {
	return func(s *Server) { s.now, s.realClock = now, false }
}

// Limits bound what one client can make the server hold. The zero value of a field means
// its default (DefaultLimits); a negative MaxConcurrentRequests means no bound.
type Limits struct {
	// MaxConcurrentRequests is how many requests are served at once; past it a request is
	// answered at once with 503 ServerBusy, as Storage answers when it throttles (EVIDENCE.md
	// 8), so that a flood of slow requests cannot exhaust memory or goroutines.
	MaxConcurrentRequests int
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are the http.Server
	// timeouts HTTPServer sets: a client that sends its request (or reads its answer) too
	// slowly is disconnected. ReadTimeout bounds the header section and a body's first
	// read; the reads after it are bounded by MinBodyRate, so that a large body may take
	// longer than ReadTimeout while it keeps its pace.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// MaxHeaderBytes bounds the request line and headers (net/http answers 431 past it).
	MaxHeaderBytes int
	// MinBodyRate is the slowest a request body may arrive, in bytes per second, once
	// BodyGrace has passed since the handler started reading it: a body behind that pace is
	// refused with 400 InvalidInput and its connection closed. When ReadTimeout is no longer
	// than BodyGrace (the default), the first read of a body is bounded by ReadTimeout from
	// the request's start instead (firstBodyReadBounded). While a request waits for
	// body bytes it does not count against MaxConcurrentRequests, so clients that trickle
	// their bodies cannot starve the others.
	MinBodyRate int
	BodyGrace   time.Duration
}

// DefaultLimits are the limits of a Server made without WithLimits.
func DefaultLimits() Limits {
	return Limits{
		MaxConcurrentRequests: 512,
		ReadHeaderTimeout:     10 * time.Second,
		ReadTimeout:           10 * time.Second, // no longer than BodyGrace (firstBodyReadBounded)
		WriteTimeout:          2 * time.Minute,
		IdleTimeout:           2 * time.Minute,
		MaxHeaderBytes:        1 << 20,
		MinBodyRate:           1 << 10,
		BodyGrace:             10 * time.Second,
	}
}

// WithLimits overrides the default limits; zero fields keep their default.
func WithLimits(l Limits) Option {
	return func(s *Server) {
		d := DefaultLimits()
		if l.MaxConcurrentRequests != 0 {
			d.MaxConcurrentRequests = l.MaxConcurrentRequests
		}
		if l.ReadHeaderTimeout > 0 {
			d.ReadHeaderTimeout = l.ReadHeaderTimeout
		}
		if l.ReadTimeout > 0 {
			d.ReadTimeout = l.ReadTimeout
		}
		if l.WriteTimeout > 0 {
			d.WriteTimeout = l.WriteTimeout
		}
		if l.IdleTimeout > 0 {
			d.IdleTimeout = l.IdleTimeout
		}
		if l.MaxHeaderBytes > 0 {
			d.MaxHeaderBytes = l.MaxHeaderBytes
		}
		if l.MinBodyRate > 0 {
			d.MinBodyRate = l.MinBodyRate
		}
		if l.BodyGrace > 0 {
			d.BodyGrace = l.BodyGrace
		}
		s.limits = d
	}
}

// New returns a Server whose development account (DevAccountName with DevAccountKey) holds
// its tables in backend; every account added with WithAccount has a backend of its own.
func New(backend api.Backend, opts ...Option) *Server {
	devKey, _ := base64.StdEncoding.DecodeString(DevAccountKey)
	s := &Server{backends: map[string]api.Backend{DevAccountName: backend}, keys: map[string][]byte{DevAccountName: devKey}, now: time.Now, acls: map[aclKey][]SignedIdentifier{},
		props: map[string]*ServiceProperties{}, limits: DefaultLimits(), queries: newQueryCache(), realClock: true}
	for _, o := range opts {
		o(s)
	}
	if n := s.limits.MaxConcurrentRequests; n > 0 {
		s.maxInflight = int64(n)
	}
	s.accounts = make(map[string]*account, len(s.keys))
	for name, key := range s.keys {
		s.accounts[name] = &account{key: key, backend: s.backends[name]}
	}
	return s
}

// account is what a Server holds for one account.
type account struct {
	key     []byte
	backend api.Backend
}

// Recovered returns how many requests panicked and were answered 500 InternalError. A
// correct server keeps it at zero; tests assert that.
func (s *Server) Recovered() int64 { return s.recovered.Load() }

// Busy returns how many requests were answered 503 ServerBusy because
// Limits.MaxConcurrentRequests were being served.
func (s *Server) Busy() int64 { return s.busy.Load() }

// HTTPServer returns an http.Server for s with every timeout set, so that a slow or stalled
// client can never hold a connection forever. Serve it on a listener made by Listener.
func (s *Server) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: s.limits.ReadHeaderTimeout,
		ReadTimeout:       s.limits.ReadTimeout,
		WriteTimeout:      s.limits.WriteTimeout,
		IdleTimeout:       s.limits.IdleTimeout,
		MaxHeaderBytes:    s.limits.MaxHeaderBytes,
		ConnContext:       withFramingWatch,
	}
}

// ListenAndServe serves on addr until ctx is done, then shuts down gracefully (at most 5 s).
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	srv := s.HTTPServer(addr)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(Listener(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}

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

// httpDate renders the Date header; the rendering of the current second is kept, as every
// answer of that second carries it.
func httpDate(t time.Time) string {
	sec := t.Unix()
	if c := lastDate.Load(); c != nil && c.sec == sec {
		return c.text
	}
	c := &dateText{sec: sec, text: t.UTC().Format(http.TimeFormat)}
	lastDate.Store(c)
	return c.text
}

type dateText struct {
	sec  int64
	text string
}

var lastDate atomic.Pointer[dateText]

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

// answerVersion is the x-ms-version of the answer to a request that sent values: the one
// asked for, as Storage echoes it (E-version-echo), or spec.APIVersion when none was sent;
// ok is false when the values are not one well-formed version.
func answerVersion(values []string) (version string, ok bool) {
	switch {
	case len(values) == 0:
		return spec.APIVersion, true
	case len(values) > 1 || !wellFormedVersion(values[0]):
		return spec.APIVersion, false
	}
	return values[0], true
}

// wellFormedVersion reports whether v has the form of a service version, a date
// YYYY-MM-DD. Storage also refuses dates that name no version; conform accepts any date.
func wellFormedVersion(v string) bool {
	if p := lastVersion.Load(); p != nil && *p == v {
		return true // clients send the same version on every request
	}
	if _, err := time.Parse("2006-01-02", v); err != nil || len(v) != len("2006-01-02") {
		return false
	}
	kept := v
	lastVersion.Store(&kept)
	return true
}

// lastVersion is the latest x-ms-version found well formed.
var lastVersion atomic.Pointer[string]

func visibleASCII(s string, max int) bool {
	if len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// rawPath is the request path exactly as the client sent it, which is what Shared Key
// signs (EVIDENCE.md 7.1).
func rawPath(r *http.Request) string {
	uri := r.RequestURI
	if strings.HasPrefix(uri, "/") {
		p, _, _ := strings.Cut(uri, "?")
		return p
	}
	return r.URL.EscapedPath()
}

// resolve finds the account (from the Host's first label or the first path segment) and
// the resource the rest of the path names.
func (x *exchange) resolve(escapedPath string) (wire.Resource, error) {
	p := strings.TrimPrefix(escapedPath, "/")
	host, ip := x.s.hostOf(x.r.Host)
	if host == "" {
		return wire.Resource{}, spec.ErrHostInfoNotPresent.New()
	}
	if !ip {
		label, _, _ := strings.Cut(host, ".")
		if name, a, ok := x.knownAccount(strings.ToLower(label)); ok && label != "localhost" {
			x.account, x.accountOf = name, a
		}
	}
	if x.account == "" {
		first, rest, _ := strings.Cut(p, "/")
		name, a, ok := x.knownAccount(first)
		if !ok {
			return wire.Resource{}, spec.ErrInvalidURI.Newf("The requested URI does not name a known account.")
		}
		x.account, x.accountOf, x.pathStyle, p = name, a, true, rest
	}
	x.backend = x.accountOf.backend
	return wire.ParseResource(p)
}

// hostOf returns the host of a Host header value, without its port, and whether it is an
// IP address (isIP). The answer for the latest value is kept, as a client sends the same
// Host on every request.
func (s *Server) hostOf(hostPort string) (host string, ip bool) {
	if h := s.lastHost.Load(); h != nil && h.hostPort == hostPort {
		return h.host, h.ip
	}
	keep := len(hostPort) <= maxCachedHost
	if keep {
		hostPort = strings.Clone(hostPort) // nothing kept refers to a request
	}
	host = hostPort
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip = isIP(host)
	if keep {
		s.lastHost.Store(&hostForm{hostPort: hostPort, host: host, ip: ip})
	}
	return host, ip
}

// hostForm is hostOf's answer for one Host value.
type hostForm struct {
	hostPort, host string
	ip             bool
}

// isIP says whether host is an IP address as net.ParseIP reads one (no zone), without
// allocating.
func isIP(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == ""
}

// serviceURL is the table endpoint as this client addresses it, ending in "/". The URLs
// of the endpoints clients use are kept (serviceURLs), as every answer names one.
func (x *exchange) serviceURL() string {
	if x.baseURL == "" {
		x.baseURL = x.s.keptServiceURL(x)
	}
	return x.baseURL
}

// keptServiceURL returns x's service URL, kept or built.
func (s *Server) keptServiceURL(x *exchange) string {
	k := serviceURLKey{host: x.r.Host, tls: x.r.TLS != nil, pathStyle: x.pathStyle}
	if x.pathStyle {
		k.account, k.secondary = x.account, x.secondary
	}
	if last := s.lastServiceURL.Load(); last != nil && last.key == k {
		return last.url
	}
	urls := s.serviceURLs.Load()
	if urls != nil {
		if u, ok := (*urls)[k]; ok {
			kept := keptURL{key: k, url: u}
			// Nothing kept refers to a request.
			kept.key.host, kept.key.account = strings.Clone(k.host), strings.Clone(k.account)
			s.lastServiceURL.Store(&kept)
			return u
		}
	}
	u := k.url()
	if len(k.host) > maxCachedHost {
		return u // a host no DNS name or address is as long as: not worth keeping
	}
	next := map[serviceURLKey]string{}
	if urls != nil {
		if len(*urls) >= maxServiceURLs {
			return u
		}
		next = maps.Clone(*urls)
	}
	next[k] = u
	s.serviceURLs.CompareAndSwap(urls, &next) // a lost race only loses this entry
	return u
}

// keptURL is one of the kept service URLs with its key.
type keptURL struct {
	key serviceURLKey
	url string
}

// enter counts a request in flight, or reports that maxInflight are being served already; a
// refused request is never counted, so that a burst of refusals cannot refuse others.
func (s *Server) enter() bool {
	for {
		n := s.inflight.Load()
		if n >= s.maxInflight {
			return false
		}
		if s.inflight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// serviceURLKey is what a service URL is made of.
type serviceURLKey struct {
	host, account             string
	tls, pathStyle, secondary bool
}

// maxServiceURLs bounds the service URLs a Server keeps, so that clients naming many hosts
// cannot grow them; past it URLs are built for each answer.
const maxServiceURLs = 64

// maxCachedHost is the longest Host a kept service URL is made of: a DNS name (253 bytes)
// with a port, or a bracketed IPv6 address with a zone and a port.
const maxCachedHost = 300

// maxBodyRoom is the most readBodyInto makes room for before a body's bytes arrive.
const maxBodyRoom = 64 << 10

func (k serviceURLKey) url() string {
	scheme := "http"
	if k.tls {
		scheme = "https"
	}
	u := scheme + "://" + k.host + "/"
	if k.pathStyle {
		u += k.account
		if k.secondary {
			u += secondarySuffix
		}
		u += "/"
	}
	return u
}

// entityLocation is the URL of an entity as this client addresses it (Location,
// DataServiceId), built in one allocation.
func (x *exchange) entityLocation(table, partitionKey, rowKey string) string {
	var room [256]byte
	path := wire.AppendEntityPath(room[:0], table, partitionKey, rowKey)
	base := x.serviceURL()
	var b strings.Builder
	b.Grow(len(base) + len(path))
	b.WriteString(base)
	b.Write(path)
	return b.String()
}

func (x *exchange) document(table string, sel []string) wire.Document {
	return wire.Document{Level: x.level, ServiceURL: x.serviceURL(), Account: x.account, Table: table, Select: sel}
}

// authenticate accepts Shared Key, Shared Key Lite, a service SAS, or (when allowed)
// nothing.
func (x *exchange) authenticate(escapedPath string) error {
	keys := func(a string) ([]byte, bool) {
		if a == x.account {
			return x.accountOf.key, true
		}
		k, ok := x.s.keys[a]
		return k, ok
	}
	if v := wire.FirstValue(x.r.Header, wire.HeaderAuthorization); isBearer(v) {
		return x.authenticateBearer(v)
	} else if v != "" {
		acct, err := wire.VerifySharedKeyAuthorization(v, x.r.Method, x.r.Header, escapedPath, x.r.URL.RawQuery, x.query, keys, x.now)
		if err != nil {
			return err
		}
		if acct != x.account {
			e := spec.ErrAuthenticationFailed.New()
			e.Message += "\nThe signing account does not own the requested resource."
			return e
		}
		return nil
	}
	if wire.IsAccountSAS(x.query) {
		return x.authenticateAccountSAS()
	}
	if wire.IsSAS(x.query) {
		return x.authenticateServiceSAS()
	}
	if x.s.allowAnon {
		return nil
	}
	// An anonymous request: 401 or 403 is UNCERTAIN (EVIDENCE.md 11.13); conform answers as
	// Azurite does, 403 AuthorizationFailure.
	return spec.ErrAuthorizationFailure.New()
}

// effectiveMethod applies X-HTTP-Method tunnelling (EVIDENCE.md 5.2): only on POST, once, and
// only to MERGE, PATCH, PUT or DELETE. MERGE and PATCH both mean Merge.
func (x *exchange) effectiveMethod() (string, error) {
	m := x.r.Method
	if vs := x.r.Header[wire.KeyXHTTPMethod]; len(vs) > 0 {
		if len(vs) > 1 || strings.Contains(vs[0], ",") {
			return "", spec.ErrXMethodIncorrectCount.New()
		}
		if m != http.MethodPost {
			return "", spec.ErrXMethodNotUsingPost.New()
		}
		switch v := strings.ToUpper(strings.TrimSpace(vs[0])); v {
		case "MERGE", "PATCH", http.MethodPut, http.MethodDelete:
			m = v
		default:
			return "", spec.ErrXMethodIncorrectValue.New()
		}
	}
	if m == http.MethodPatch {
		m = "MERGE"
	}
	return m, nil
}

// permit checks the SAS, if the request carries one, for an operation on an entity.
func (x *exchange) permit(table, perms, pk, rk string) error {
	if x.acctSAS != nil {
		return x.acctSAS.Allows(wire.SASResourceObject, perms)
	}
	if x.sas == nil {
		return nil
	}
	return x.sas.Allows(table, perms, pk, rk)
}

// permitTableOp refuses table-level operations to a service SAS, which grants entity access
// to one table only (EVIDENCE.md 7.2); an account SAS allows them by resource type and
// permission (permitAccountTableOp).
func (x *exchange) permitTableOp() error {
	if x.acctSAS != nil {
		return x.permitAccountTableOp()
	}
	if x.sas == nil {
		return nil
	}
	return spec.ErrAuthorizationFailure.New()
}

// negotiate sets the metadata level of a data answer from Accept and $format.
func (x *exchange) negotiate() error {
	m, err := wire.NegotiateMetadata(x.accept, x.query.Get("$format"))
	if err != nil {
		return err
	}
	x.level = m
	return nil
}

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

// context bounds backend work by the request's timeout parameter, at most 30 s (TMO): a
// larger value, however large, means 30 s. The caller cancels it once the work is done.
func (x *exchange) context() (*deadlineContext, error) {
	d := spec.MaxServerTimeout
	if v := x.query.Get("timeout"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, spec.ErrInvalidQueryParameter.Newf("The timeout query parameter must be a positive integer of seconds.")
		}
		if int64(n) < int64(d/time.Second) { // compared in seconds: n seconds may overflow a Duration
			d = time.Duration(n) * time.Second
		}
	}
	// The work is not tied to the connection: a client that shuts its sending side after
	// its request (legal in HTTP/1.1; net/http then cancels the request's context) still
	// gets its answer, and the work is bounded by the timeout alone.
	if x.detached.values == nil {
		x.detached.values = x.r.Context()
	}
	if x.deadlineUsed {
		return withDeadline(&x.detached, time.Now().Add(d)), nil
	}
	x.deadlineUsed = true
	x.deadline = deadlineContext{parent: &x.detached, deadline: time.Now().Add(d)}
	return &x.deadline, nil
}

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

func (x *exchange) write(status int, body []byte) {
	if body != nil {
		x.setHeader("Content-Length", lengthText(len(body)))
	}
	x.send(status, body)
}

// lengthText is strconv.Itoa(n). The texts of lengths below len(lengthTexts) are kept once
// made: the answers of one kind have a handful of lengths.
func lengthText(n int) string {
	if n < 0 || n >= len(lengthTexts) {
		return strconv.Itoa(n)
	}
	if p := lengthTexts[n].Load(); p != nil {
		return *p
	}
	t := strconv.Itoa(n)
	lengthTexts[n].Store(&t)
	return t
}

var lengthTexts [16 << 10]atomic.Pointer[string]

// send writes the status and body; the headers are set.
func (x *exchange) send(status int, body []byte) {
	x.wrote = true
	x.w.WriteHeader(status)
	if body != nil && x.r.Method != http.MethodHead {
		_, _ = x.w.Write(body)
	}
}

func (x *exchange) writeJSON(status int, body []byte) {
	x.setHeader(wire.HeaderContentType, x.level.ContentType())
	x.write(status, body)
}

// prefer reads the Prefer header: "return-content", "return-no-content" or "".
func prefer(h interface{ Get(string) string }) string {
	rest := h.Get(wire.HeaderPrefer)
	for rest != "" {
		var p string
		p, rest, _ = strings.Cut(rest, ",")
		p = strings.TrimSpace(p)
		switch {
		case strings.EqualFold(p, "return-content"):
			return "return-content"
		case strings.EqualFold(p, "return-no-content"):
			return "return-no-content"
		}
	}
	return ""
}

// bodyBuffers recycles the buffers answers are rendered into.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledBody bounds the buffers kept for reuse, so that one large answer does not stay
// allocated.
const maxPooledBody = 1 << 20

// An entity set larger than streamAfter is written as it is rendered, in parts of
// streamChunk (chunked transfer coding): a client that reads slowly or not at all then
// holds about streamAfter bytes of its answer in the server, not the whole page (a page of
// 1,000 entities may be a gigabyte). A smaller set is sent whole, with its Content-Length.
const (
	streamAfter = 1 << 20
	streamChunk = 256 << 10
)

// writeEntitySet writes the answer of Query Entities (wire.AppendEntitySet), streamed when
// it is large. Once streaming has begun a failure cannot be answered: the connection is cut
// (http.ErrAbortHandler), so that the client sees an incomplete answer, never a short one
// that looks whole.
func (x *exchange) writeEntitySet(ents []api.Entity, doc wire.Document) error {
	return x.writeEntitySetOf(len(ents), func(b []byte, i int) ([]byte, error) {
		return wire.AppendEntitySetItem(b, i, ents[i], doc)
	}, doc)
}

// writeEntitySetOf is writeEntitySet of n entities, the i-th rendered by item.
func (x *exchange) writeEntitySetOf(n int, item func(b []byte, i int) ([]byte, error), doc wire.Document) error {
	bp := bodyBuffers.Get().(*[]byte)
	b := wire.AppendEntitySetStart((*bp)[:0], doc)
	streaming, abort := false, false
	var err error
	for i := range n {
		if b, err = item(b, i); err != nil {
			abort = streaming
			break
		}
		if len(b) < streamChunk || !streaming && len(b) < streamAfter || x.r.Method == http.MethodHead {
			continue
		}
		if !streaming {
			streaming = true
			x.setHeader(wire.HeaderContentType, x.level.ContentType())
			x.send(http.StatusOK, nil)
		}
		if werr := x.writeStreamed(b); werr != nil {
			abort = true // the client is gone
			break
		}
		b = b[:0]
	}
	switch {
	case abort:
	case err != nil:
	case streaming:
		_ = x.writeStreamed(wire.AppendEntitySetEnd(b))
	default:
		x.writeJSON(http.StatusOK, wire.AppendEntitySetEnd(b))
	}
	if cap(b) <= maxPooledBody {
		*bp = b[:0]
		bodyBuffers.Put(bp)
	}
	if abort {
		panic(http.ErrAbortHandler)
	}
	return err
}

// writeStreamed writes a part of a streamed answer. While the client takes it, the request
// does not count against Limits.MaxConcurrentRequests: clients that read slowly cannot
// starve the others.
func (x *exchange) writeStreamed(b []byte) error {
	if x.s.maxInflight > 0 {
		x.s.inflight.Add(-1)
		defer x.s.inflight.Add(1)
	}
	_, err := x.w.Write(b)
	return err
}

// writeRendered renders an answer with render into a pooled buffer and writes it as JSON.
func (x *exchange) writeRendered(status int, render func([]byte) ([]byte, error)) error {
	bp := bodyBuffers.Get().(*[]byte)
	body, err := render((*bp)[:0])
	if err == nil {
		x.writeJSON(status, body)
	}
	if cap(body) <= maxPooledBody && body != nil {
		*bp = body[:0]
	}
	if cap(*bp) <= maxPooledBody {
		bodyBuffers.Put(bp)
	}
	return err
}
