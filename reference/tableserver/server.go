package tableserver

import (
	"context"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference/api"
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
