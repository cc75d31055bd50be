package rest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// direct sends the driver's own operations over plain-HTTP/1.1 keep-alive connections,
// each request written and its answer read by the calling goroutine: net/http's Transport
// hands every exchange to two goroutines per connection and builds a header map on each
// side, which on a loopback endpoint costs as much CPU as the service's own work. The bytes
// sent are those net/http sends for the same request (Host, User-Agent, Content-Length,
// the protocol's headers, Accept-Encoding: gzip, the body), and answers are read as
// http.ReadResponse reads them (readSimpleAnswer, or ReadResponse itself). It serves only
// http:// endpoints reached without a proxy, Shared Key credentials and bodies up to
// maxDirectBody; everything else, and every RawHTTP request, goes through the http.Client.
type direct struct {
	addr    string // host:port dialled
	host    string // the Host header
	dialer  net.Dialer
	timeout time.Duration // bounds each exchange (WithTimeout), as http.Client.Timeout does

	mu      sync.Mutex
	idle    []*directConn // most recently used last
	pruning bool          // a prune of idle connections is scheduled
}

// maxIdleReuse is how long a connection may have been idle and still be reused. A
// connection the server closed while idle would fail the next request on it (net/http
// watches idle connections with a goroutine each for that); servers keep idle connections
// for seconds at least (Node's default, which Azurite uses, is 5 s), so one idle for less
// than this is taken as open and any older one is closed.
const maxIdleReuse = 2 * time.Second

// idleCheckAfter is how long a connection must have been idle before it is checked, with
// one non-blocking peek, to be still open and silent before reuse (idleConnAlive). Under
// load connections come back within microseconds and are reused without the check; a
// server that closes a connection sooner than this after an answer is not one the check
// is for (a server with an idle timeout, a restarted one).
const idleCheckAfter = 100 * time.Millisecond

// maxDirectBody bounds the bodies the direct sender sends: it writes a request before it
// reads the answer, so a body the server refuses before reading it (413
// RequestBodyTooLarge) could fail the write and hide that answer; net/http, which reads
// while it writes, sends larger bodies. A body this small fits in the sockets' buffers.
const maxDirectBody = 64 << 10

// maxIdleConns bounds the connections kept for reuse (as MaxIdleConnsPerHost does).
const maxIdleConns = 256

type directConn struct {
	nc        net.Conn
	br        *bufio.Reader
	idleSince time.Time
	reused    bool

	// The context whose end interrupts the exchanges of that context on this connection,
	// registered once with context.AfterFunc and kept while the connection serves it (a
	// load's workers share one context, and a registration per request costs allocations
	// and a lock shared by every worker).
	watched   context.Context
	stopWatch func() bool

	// deadline is the connection's deadline as last set by bound; ctxDeadline says it came
	// from a context (and so must not be kept for an exchange of another context).
	deadline    time.Time
	ctxDeadline bool

	mu      sync.Mutex
	active  context.Context // the context of the exchange in flight, nil between exchanges
	aborted bool            // active ended during the exchange: the connection is unusable
}

// watch makes the end of ctx interrupt the exchange about to start on c.
func (c *directConn) watch(ctx context.Context) {
	if ctx.Done() != nil && !sameContext(c.watched, ctx) {
		c.unwatch()
		c.watched = ctx
		c.stopWatch = context.AfterFunc(ctx, func() { c.abort(ctx) })
	}
	c.mu.Lock()
	c.active = ctx
	c.mu.Unlock()
}

// sameContext says whether a and b are the same context; contexts of a type that cannot
// be compared (or that panic when compared) are never taken as the same.
func sameContext(a, b context.Context) (same bool) {
	t := reflect.TypeOf(a)
	if a == nil || t != reflect.TypeOf(b) || !t.Comparable() {
		return false
	}
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// abort interrupts the exchange in flight on c if its context has ended (the end of ctx
// triggered the call; the exchange's own context decides, so no comparison is needed).
func (c *directConn) abort(_ context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active != nil && c.active.Err() != nil {
		c.aborted = true
		_ = c.nc.SetDeadline(aLongTimeAgo)
	}
}

// release ends the exchange in flight and says whether c is still usable.
func (c *directConn) release() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active = nil
	return !c.aborted
}

func (c *directConn) unwatch() {
	if c.stopWatch != nil {
		c.stopWatch()
		c.watched, c.stopWatch = nil, nil
	}
}

// bound sets the connection's deadline for the exchange about to start, so that it is
// bounded even where the end of ctx could not reach it: by the context's deadline, or by
// timeout (WithTimeout) when that is earlier or there is none. A deadline from timeout is
// moved only when it has fallen more than a tenth of timeout (at most a second) behind, so
// that back-to-back exchanges do not each reset the connection's timers: every exchange
// still has at least nine tenths of timeout.
func (c *directConn) bound(ctx context.Context, timeout time.Duration) error {
	var want time.Time
	if timeout > 0 {
		want = time.Now().Add(timeout)
	}
	cd, hasCtxDeadline := ctx.Deadline()
	// The context's own end interrupts the exchange (watch) and makes ctx.Err() say why;
	// the connection's deadline is a backstop a little after it.
	cd = cd.Add(contextDeadlineSlack)
	if hasCtxDeadline && (want.IsZero() || cd.Before(want)) {
		want = cd
	} else if !want.IsZero() && !c.deadline.IsZero() && !c.ctxDeadline && want.Sub(c.deadline) <= min(timeout/10, time.Second) {
		return nil
	}
	if want.Equal(c.deadline) {
		return nil
	}
	c.deadline, c.ctxDeadline = want, hasCtxDeadline && want.Equal(cd)
	return c.nc.SetDeadline(want)
}

// contextDeadlineSlack is how long after a context's deadline the connection's own
// deadline falls (directConn.bound).
const contextDeadlineSlack = 50 * time.Millisecond

// close closes c's connection and forgets its context.
func (c *directConn) close() {
	c.unwatch()
	_ = c.nc.Close()
}

// newDirect returns the direct sender for endpoint, or nil when the endpoint is not plain
// HTTP reached without a proxy.
func newDirect(endpoint *url.URL) *direct {
	if endpoint.Scheme != "http" || endpoint.Host == "" || endpoint.User != nil {
		return nil
	}
	for i := 0; i < len(endpoint.Host); i++ {
		if c := endpoint.Host[i]; c <= ' ' || c >= 0x7f {
			return nil
		}
	}
	probe := &http.Request{URL: endpoint, Header: http.Header{}}
	if p, err := http.ProxyFromEnvironment(probe); err != nil || p != nil {
		return nil
	}
	addr := endpoint.Host
	if endpoint.Port() == "" {
		addr = net.JoinHostPort(endpoint.Hostname(), "80")
	}
	return &direct{addr: addr, host: endpoint.Host, dialer: net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}}
}

// directRequest is what the driver sends; header holds canonical names, each once.
type directRequest struct {
	method     string
	requestURI string // escaped path and query, exactly as signed
	header     []headerField
	body       []byte
}

type headerField struct{ name, value string }

// setField replaces the value of name (a canonical name) in h or adds it.
func setField(h []headerField, name, value string) []headerField {
	for i := range h {
		if h[i].name == name {
			h[i].value = value
			return h
		}
	}
	return append(h, headerField{name, value})
}

// field returns the value of name (a canonical name) in h, "" when absent.
func field(h []headerField, name string) string {
	for _, f := range h {
		if f.name == name {
			return f.value
		}
	}
	return ""
}

// invalidHeader is what net/http answers for a header value it refuses to send.
func invalidHeader(name string) error {
	return fmt.Errorf("net/http: invalid header field value for %q", name)
}

// validHeaderValue is net/http's rule: no control characters but horizontal tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// validHeaderName says whether v is a token (RFC 9110 5.1), as net/http requires of
// header names.
func validHeaderName(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !tokenChar[v[i]] {
			return false
		}
	}
	return true
}

var tokenChar = func() (t [256]bool) {
	for c := '!'; c <= '~'; c++ {
		t[c] = !strings.ContainsRune("\"(),/:;<=>?@[\\]{}", c)
	}
	return t
}()

// requestBuffers recycles the buffers requests are written from.
var requestBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// roundTrip sends r and reads the answer and its whole body (at most maxResponseBytes+1
// bytes) before returning. A connection that had been idle and fails before any answer
// arrives is retried once on a new connection when the request may be replayed (as
// net/http does: nothing of it was written, or it is a GET or HEAD).
func (d *direct) roundTrip(ctx context.Context, r *directRequest) (directAnswer, error) {
	bp := requestBuffers.Get().(*[]byte)
	buf, err := d.appendRequest((*bp)[:0], r)
	defer func() {
		if cap(buf) <= maxPooledRequest {
			*bp = buf[:0]
			requestBuffers.Put(bp)
		}
	}()
	if err != nil {
		return directAnswer{}, err
	}
	return d.send(ctx, r.method, buf)
}

// send sends the request req of method, written out.
func (d *direct) send(ctx context.Context, method string, req []byte) (directAnswer, error) {
	for attempt := 0; ; attempt++ {
		c, err := d.get(ctx)
		if err != nil {
			return directAnswer{}, err
		}
		a, written, answered, err := d.exchange(ctx, c, method, req)
		if err == nil {
			return a, nil
		}
		if ctx.Err() != nil {
			return directAnswer{}, fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			// The connection's deadline is the context's when that is earlier, and it may
			// pass a moment before the context reports its end.
			if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
				return directAnswer{}, fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
			}
			return directAnswer{}, fmt.Errorf("rest: no answer within %v (%w)", d.timeout, err)
		}
		replayable := !written || method == http.MethodGet || method == http.MethodHead
		if attempt > 0 || !c.reused || answered || !replayable {
			return directAnswer{}, err
		}
	}
}

// maxPooledRequest bounds the request buffers kept for reuse (a 4 MiB batch is not kept).
const maxPooledRequest = 64 << 10

func (d *direct) appendRequest(b []byte, r *directRequest) ([]byte, error) {
	for i := 0; i < len(r.requestURI); i++ {
		if c := r.requestURI[i]; c < ' ' || c == 0x7f {
			return b, fmt.Errorf("net/url: invalid control character in URL")
		}
	}
	b = append(b, r.method...)
	b = append(b, ' ')
	b = append(b, r.requestURI...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, d.host...)
	b = append(b, "\r\nUser-Agent: Go-http-client/1.1\r\n"...)
	if len(r.body) > 0 || r.method == http.MethodPost || r.method == http.MethodPut || r.method == http.MethodPatch {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(r.body)), 10)
		b = append(b, "\r\n"...)
	}
	for _, f := range r.header {
		if !validHeaderName(f.name) {
			return b, fmt.Errorf("net/http: invalid header field name %q", strings.Clone(f.name))
		}
		if !validHeaderValue(f.value) {
			return b, invalidHeader(strings.Clone(f.name))
		}
		b = append(b, f.name...)
		b = append(b, ": "...)
		b = append(b, f.value...)
		b = append(b, "\r\n"...)
	}
	if r.method != http.MethodHead {
		b = append(b, "Accept-Encoding: gzip\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, r.body...), nil
}

// exchange writes req on c and reads the answer. written says whether any of the request
// was written, answered whether any of the answer was read; c is put back for reuse or
// closed.
func (d *direct) exchange(ctx context.Context, c *directConn, method string, req []byte) (a directAnswer, written, answered bool, err error) {
	// The end of ctx (cancelled, or its deadline passed) interrupts the exchange by
	// expiring the connection's deadline; the connection is closed afterwards.
	c.watch(ctx)
	keep := false
	defer func() {
		if c.release() && keep {
			d.put(c)
		} else {
			c.close()
		}
	}()
	if err := ctx.Err(); err != nil {
		return a, false, false, err
	}
	if err := c.bound(ctx, d.timeout); err != nil {
		return a, false, false, err
	}
	n, err := c.nc.Write(req)
	if err != nil {
		return a, n > 0, false, err
	}
	if _, err := c.br.Peek(1); err != nil {
		return a, true, false, err
	}
	a, ok, err := readSimpleAnswer(c.br, method)
	if !ok && err == nil {
		a, err = readAnyAnswer(c.br, method)
	}
	if err != nil {
		return directAnswer{}, true, true, err
	}
	if strings.EqualFold(a.get("Content-Encoding"), "gzip") && len(a.body) > 0 {
		if a.body, err = gunzip(a.body); err != nil {
			return directAnswer{}, true, true, err
		}
		a.del("Content-Encoding")
		a.del("Content-Length")
	}
	// Bytes left after the answer (a body on a 204, more than Content-Length, an answer
	// nobody asked for) would be read as the next request's answer: such a connection is
	// closed, as net/http closes it.
	keep = !a.close && c.br.Buffered() == 0
	return a, true, true, nil
}

var aLongTimeAgo = time.Unix(1, 0)

// get returns an idle connection used less than maxIdleReuse ago, or dials a new one.
func (d *direct) get(ctx context.Context) (*directConn, error) {
	now := time.Now()
	d.mu.Lock()
	for len(d.idle) > 0 {
		c := d.idle[len(d.idle)-1]
		d.idle[len(d.idle)-1] = nil
		d.idle = d.idle[:len(d.idle)-1]
		if idle := now.Sub(c.idleSince); idle < maxIdleReuse && (idle < idleCheckAfter || idleConnAlive(c.nc)) {
			d.mu.Unlock()
			c.reused = true
			return c, nil
		}
		c.close()
	}
	d.mu.Unlock()
	nc, err := d.dialer.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, err
	}
	return &directConn{nc: nc, br: bufio.NewReaderSize(nc, 4096)}, nil
}

// put keeps c for reuse, and schedules the closing of connections left idle too long.
func (d *direct) put(c *directConn) {
	c.idleSince = time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.idle) >= maxIdleConns {
		c.close()
		return
	}
	d.idle = append(d.idle, c)
	if !d.pruning {
		d.pruning = true
		time.AfterFunc(maxIdleReuse, d.prune)
	}
}

// prune closes the connections idle for maxIdleReuse or longer.
func (d *direct) prune() {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	kept := d.idle[:0]
	for _, c := range d.idle {
		if now.Sub(c.idleSince) < maxIdleReuse {
			kept = append(kept, c)
		} else {
			c.close()
		}
	}
	clear(d.idle[len(kept):])
	d.idle = kept
	d.pruning = len(kept) > 0
	if d.pruning {
		time.AfterFunc(maxIdleReuse, d.prune)
	}
}
