package rest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/tableserver"
)

type seenRequest struct {
	method, uri string
	header      http.Header
	body        []byte
}

// recordingServer serves a fresh reference and records every request it receives.
func recordingServer(t *testing.T) (cs string, seen func() []seenRequest) {
	t.Helper()
	srv := tableserver.New(reference.New(reference.WithDeleteHold(0)))
	var mu sync.Mutex
	var got []seenRequest
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seenRequest{r.Method, r.RequestURI, r.Header.Clone(), body})
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + tableserver.DevAccountKey + ";TableEndpoint=" + ts.URL + "/devstoreaccount1",
		func() []seenRequest {
			mu.Lock()
			defer mu.Unlock()
			out := got
			got = nil
			return out
		}
}

// The direct sender sends what net/http sends for the same operation: method, request
// target, headers (but the per-request id, date and signature) and body; and the server
// accepts its signatures.
func TestDirectSendsWhatNetHTTPSends(t *testing.T) {
	cs, seen := recordingServer(t)
	viaDirect, err := New(cs)
	if err != nil {
		t.Fatal(err)
	}
	viaNetHTTP, err := New(cs, WithHTTPClient(&http.Client{Transport: NewTransport(), Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	if viaDirect.direct == nil || viaNetHTTP.direct != nil {
		t.Fatal("the direct sender is not used exactly by the backend with its own client")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ops := func(b *Backend, table string) error {
		if err := b.CreateTable(ctx, table); err != nil {
			return err
		}
		e := api.NewEntity("p 1", "r'1", map[string]api.Value{"S": api.String("é\"x"), "N": api.Int64(7)})
		stored, err := b.InsertEntity(ctx, table, e)
		if err != nil {
			return err
		}
		if _, err := b.UpdateEntity(ctx, table, e, api.Merge, stored.ETag); err != nil {
			return err
		}
		if _, err := b.UpdateEntity(ctx, table, e, api.Replace, ""); err != nil {
			return err
		}
		if _, err := b.GetEntity(ctx, table, e.PartitionKey, e.RowKey, []string{"S"}); err != nil {
			return err
		}
		if _, err := b.QueryEntities(ctx, table, api.Query{Filter: "N eq 7L", Top: api.TopOf(3)}); err != nil {
			return err
		}
		if _, err := b.SubmitBatch(ctx, table, []api.BatchOp{{Kind: api.BatchInsertOrMerge, Entity: e}}); err != nil {
			return err
		}
		if _, err := b.GetEntity(ctx, table, "p", "absent", nil); err == nil {
			return errors.New("a missing entity was found")
		}
		return b.DeleteEntity(ctx, table, e.PartitionKey, e.RowKey, "*")
	}
	if err := ops(viaNetHTTP, "viaone"); err != nil {
		t.Fatalf("net/http: %v", err)
	}
	want := seen()
	if err := ops(viaDirect, "viatwo"); err != nil {
		t.Fatalf("direct: %v", err)
	}
	got := seen()
	if len(got) != len(want) {
		t.Fatalf("direct sent %d requests, net/http %d", len(got), len(want))
	}
	norm := func(r seenRequest) seenRequest {
		r.uri = strings.ReplaceAll(r.uri, "viatwo", "viaone")
		r.body = bytes.ReplaceAll(r.body, []byte("viatwo"), []byte("viaone"))
		h := r.header.Clone()
		if _, ok := h["If-Match"]; ok && h.Get("If-Match") != "*" {
			h.Set("If-Match", "an etag") // the entities' own
		}
		for _, k := range []string{"X-Ms-Client-Request-Id", "X-Ms-Date", "Authorization"} {
			if len(h[k]) != 1 {
				t.Errorf("%s %s: %s = %q", r.method, r.uri, k, h[k])
			}
			delete(h, k)
		}
		if ct := h.Get("Content-Type"); strings.HasPrefix(ct, "multipart/mixed") {
			delete(h, "Content-Type") // the batch boundary is random
			r.body = nil
		}
		r.header = h
		return r
	}
	for i := range got {
		if g, w := norm(got[i]), norm(want[i]); !reflect.DeepEqual(g, w) {
			t.Errorf("request %d:\ndirect   %+v\nnet/http %+v", i, g, w)
		}
	}
}

// An answer read by readSimpleAnswer, or by readAnyAnswer when it declines, is what
// net/http reads, for the answers services give and for unusual ones.
func TestDirectReadsAnswersAsNetHTTP(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(`{"a":1}`))
	_ = zw.Close()
	answers := []struct {
		name, method, raw string
		simple            bool // taken by the fast path
		body              string
	}{
		{"json", "GET", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nEtag: W/\"x\"\r\nContent-Length: 7\r\n\r\n{\"a\":1}", true, `{"a":1}`},
		{"no content", "PUT", "HTTP/1.1 204 No Content\r\nETag: W/\"1\"\r\nX-Ms-Request-Id: a\r\n\r\n", true, ""},
		{"lower-case names and repeats", "GET", "HTTP/1.1 200 OK\r\nx-ms-version: 2019-02-02\r\nvary: a\r\nvary: b\r\ncontent-length: 2\r\n\r\n{}", true, "{}"},
		{"close", "GET", "HTTP/1.1 503 Service Unavailable\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n", true, ""},
		{"head", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", true, ""},
		{"pragma", "GET", "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 0\r\n\r\n", true, ""},
		{"signed length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}", false, ""},
		{"control character", "GET", "HTTP/1.1 200 OK\r\nA: b\x01\r\nContent-Length: 0\r\n\r\n", false, ""},
		{"spaces", "GET", "HTTP/1.1 200\r\nA:   v  \r\nContent-Length: 1\r\n\r\nx", true, "x"},
		{"chunked", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", false, "abc"},
		{"until close", "GET", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it", false, "all of it"},
		{"continue first", "POST", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}", false, "{}"},
		{"http/1.0", "GET", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", false, "{}"},
		{"folded", "GET", "HTTP/1.1 200 OK\r\nA: b\r\n c\r\nContent-Length: 0\r\n\r\n", false, ""},
		{"two lengths", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", false, ""},
		{"gzip", "GET", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + itoa(gz.Len()) + "\r\n\r\n" + gz.String(), true, `{"a":1}`},
	}
	for _, a := range answers {
		t.Run(a.name, func(t *testing.T) {
			reader := func() *bufio.Reader {
				br := bufio.NewReader(strings.NewReader(a.raw))
				_, _ = br.Peek(1) // as exchange does: the answer has begun to arrive
				return br
			}
			br := reader()
			_, simple, _ := readSimpleAnswer(reader(), a.method)
			if simple != a.simple {
				t.Errorf("fast path taken: %v, want %v", simple, a.simple)
			}
			got, err := readAnyOf(br, a.method)
			want, werr := readAnyAnswer(reader(), a.method)
			if (err != nil) != (werr != nil) {
				t.Fatalf("error %v, net/http %v", err, werr)
			}
			if err != nil {
				return
			}
			if got.status != want.status || !reflect.DeepEqual(got.httpHeader(), want.httpHeader()) || !bytes.Equal(got.body, want.body) || got.close != want.close {
				t.Errorf("read %+v\nnet/http %+v", got, want)
			}
			for name, vs := range want.header {
				if v := got.get(strings.ToLower(name)); v != vs[0] {
					t.Errorf("get(%q) = %q, want %q", strings.ToLower(name), v, vs[0])
				}
			}
			if body := got.body; a.name == "gzip" {
				if body, err = gunzip(body); err != nil || string(body) != a.body {
					t.Errorf("gunzipped %q, %v", body, err)
				}
			} else if string(body) != a.body {
				t.Errorf("body %q, want %q", body, a.body)
			}
		})
	}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

func readAnyOf(br *bufio.Reader, method string) (directAnswer, error) {
	a, ok, err := readSimpleAnswer(br, method)
	if !ok && err == nil {
		return readAnyAnswer(br, method)
	}
	return a, err
}

// oneShotServer answers each request with answer on a new connection and closes the
// connection once it has answered, reporting it on closed.
func oneShotServer(t *testing.T, answer string) (addr string, accepted *atomic.Int64, closed chan struct{}) {
	t.Helper()
	accepted = &atomic.Int64{}
	closed = make(chan struct{}, 16)
	addr = serveConns(t, func(c net.Conn) {
		accepted.Add(1)
		defer func() { closed <- struct{}{} }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		_, _ = io.WriteString(c, answer)
	})
	return addr, accepted, closed
}

// A kept connection the server has closed while it was idle (for idleCheckAfter or more)
// is found closed before it is reused, so the next request, a POST included, goes out once
// on a new connection.
func TestDirectDoesNotWriteIntoConnectionsClosedWhileIdle(t *testing.T) {
	addr, accepted, closed := oneShotServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
	d := &direct{addr: addr, host: addr}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i, method := range []string{http.MethodGet, http.MethodGet, http.MethodPost} {
		r := &directRequest{method: method, requestURI: "/a/t()"}
		if method == http.MethodPost {
			r.body = []byte("{}")
		}
		if _, err := d.roundTrip(ctx, r); err != nil {
			t.Fatalf("request %d (%s) after the server closed the idle connection: %v", i, method, err)
		}
		if n := accepted.Load(); n != int64(i+1) {
			t.Fatalf("request %d: %d connections, want %d (each on a new one, sent once)", i, n, i+1)
		}
		<-closed
		time.Sleep(idleCheckAfter + 20*time.Millisecond) // idle long enough to be checked
	}
}

// A kept connection that the server closes after reading the request, without answering,
// is retried on a new connection only when the request may be replayed (a GET), never for
// a POST, as net/http does.
func TestDirectRetriesOnlyReplayableRequestsOnStaleConnections(t *testing.T) {
	var accepted atomic.Int32
	addr := serveConns(t, func(c net.Conn) { // answers the first request, reads the second and hangs up
		accepted.Add(1)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(c)
		for i := 0; ; i++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			if i == 1 {
				return
			}
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
		}
	})
	d := &direct{addr: addr, host: addr}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	send := func(method string) error {
		r := &directRequest{method: method, requestURI: "/a/t()"}
		if method == http.MethodPost {
			r.body = []byte("{}")
		}
		_, err := d.roundTrip(ctx, r)
		return err
	}
	if err := send(http.MethodGet); err != nil {
		t.Fatal(err)
	}
	if err := send(http.MethodGet); err != nil { // read, unanswered, replayed on connection 2
		t.Fatalf("a GET the server dropped was not retried: %v", err)
	}
	if n := accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	if err := send(http.MethodPost); err == nil { // read, unanswered on connection 2
		t.Error("a POST the server dropped reported success")
	}
	if n := accepted.Load(); n != 2 {
		t.Errorf("a POST was sent again: %d connections", n)
	}
}

// Connections idle for maxIdleReuse or longer are not reused.
func TestDirectDoesNotReuseLongIdleConnections(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	d := &direct{addr: l.Addr().String(), host: l.Addr().String()}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 3 {
		if i == 2 {
			d.mu.Lock()
			d.idle[0].idleSince = time.Now().Add(-maxIdleReuse)
			d.mu.Unlock()
		}
		if a, err := d.roundTrip(ctx, &directRequest{method: http.MethodDelete, requestURI: "/x"}); err != nil || a.status != http.StatusNoContent {
			t.Fatalf("request %d: %d, %v", i, a.status, err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (one reused, one replacing a long-idle one)", n)
	}
}

// A request whose context ends while the server does not answer fails with the context's
// error, at once.
func TestDirectStopsWithTheContext(t *testing.T) {
	addr := silentServer(t)
	d := &direct{addr: addr, host: addr}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := d.roundTrip(ctx, &directRequest{method: http.MethodGet, requestURI: "/x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's deadline", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("returned after %v", el)
	}
}

// Header values that would split the request are refused before anything is sent, as
// net/http refuses them.
func TestDirectRefusesHeaderInjection(t *testing.T) {
	cs, seen := recordingServer(t)
	b, err := New(cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = b.UpdateEntity(ctx, "t", api.NewEntity("p", "r", nil), api.Replace, "\"x\"\r\nX-Evil: 1")
	if err == nil || !strings.Contains(err.Error(), "invalid header field value") {
		t.Errorf("error %v", err)
	}
	if got := seen(); len(got) != 0 {
		t.Errorf("sent %d requests", len(got))
	}
}

func TestValidHeaderName(t *testing.T) {
	for name, want := range map[string]bool{
		"X-Ms-Date": true, "Content-Type": true, "a!#$%&'*+.^_`|~9": true,
		"": false, "A B": false, "A:B": false, "A\r\nB": false, "é": false, "A(B)": false, "A\x7f": false,
	} {
		if got := validHeaderName(name); got != want {
			t.Errorf("validHeaderName(%q) = %v", name, got)
		}
	}
}

// Entities read by the direct sender stay intact when later answers reuse its buffers.
func TestDirectEntitiesOutliveTheirAnswers(t *testing.T) {
	cs, _ := recordingServer(t)
	b, err := New(cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.CreateTable(ctx, "outlive"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	var got []api.Entity
	for i, fill := range []string{"a", "b", "c", "d"} {
		rk := string(rune('0' + i))
		want[rk] = strings.Repeat(fill, 5000)
		if _, err := b.InsertEntity(ctx, "outlive", api.NewEntity("p", rk, map[string]api.Value{"S": api.String(want[rk])})); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		for rk := range want {
			e, err := b.GetEntity(ctx, "outlive", "p", rk, nil)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, e)
		}
	}
	for _, e := range got {
		if !e.Properties["S"].Equal(api.String(want[e.RowKey])) || e.PartitionKey != "p" {
			t.Fatalf("entity %s changed after later answers", e.RowKey)
		}
	}
}

// A body past the service's limit, which the server refuses before reading it, comes back
// as the server's 413 RequestBodyTooLarge, not as a failed write.
func TestOversizeBodyGetsTheServersAnswer(t *testing.T) {
	cs, _ := recordingServer(t)
	b, err := New(cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.CreateTable(ctx, "oversize"); err != nil {
		t.Fatal(err)
	}
	var ops []api.BatchOp
	for i := range 100 {
		ops = append(ops, api.BatchOp{Kind: api.BatchInsert, Entity: api.NewEntity("p", itoa(i), map[string]api.Value{"S": api.String(strings.Repeat("x", 60<<10))})})
	}
	_, err = b.SubmitBatch(ctx, "oversize", ops)
	var se *spec.Error
	if !errors.As(err, &se) || se.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("error %v, want 413", err)
	}
}

// A context registered once on a kept connection still interrupts a later exchange of it
// on that connection, and its end does not harm the connection's later exchanges of
// another context.
func TestDirectKeptConnectionsFollowTheirContexts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}), ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { close(release); _ = srv.Close() })
	d := &direct{addr: l.Addr().String(), host: l.Addr().String()}
	send := func(ctx context.Context, path string) error {
		_, err := d.roundTrip(ctx, &directRequest{method: http.MethodGet, requestURI: path})
		return err
	}
	first, cancelFirst := context.WithCancel(context.Background())
	if err := send(first, "/a"); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(100 * time.Millisecond); cancelFirst() }()
	start := time.Now()
	if err := send(first, "/hang"); !errors.Is(err, context.Canceled) {
		t.Errorf("a hung exchange of a cancelled context: %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("the cancel took %v", el)
	}

	second, cancelSecond := context.WithCancel(context.Background())
	defer cancelSecond()
	if err := send(second, "/a"); err != nil {
		t.Fatal(err)
	}
	before := conns.Load()
	third, cancelThird := context.WithCancel(context.Background())
	defer cancelThird()
	cancelSecond() // while its connection is idle
	time.Sleep(20 * time.Millisecond)
	if err := send(third, "/a"); err != nil {
		t.Fatalf("an exchange after another context ended: %v", err)
	}
	if conns.Load() != before {
		t.Error("the connection was not reused")
	}
}

// Beside the direct sender, the Transport drops idle connections as early as the direct
// sender does (a server's idle timeout would otherwise race their reuse after a timed
// phase); without it, the Transport keeps its defaults.
func TestTransportIdleTimeoutFollowsTheDirectSender(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		direct   bool
		want     time.Duration
	}{
		{"http://127.0.0.1:1/devstoreaccount1", true, maxIdleReuse},
		{"https://acct.table.core.windows.net", false, NewTransport().IdleConnTimeout},
	} {
		b, err := New("AccountName=acct;AccountKey=" + tableserver.DevAccountKey + ";TableEndpoint=" + tc.endpoint)
		if err != nil {
			t.Fatal(err)
		}
		tr, ok := b.client.Transport.(*http.Transport)
		if !ok || (b.direct != nil) != tc.direct || tr.IdleConnTimeout != tc.want {
			t.Errorf("%s: direct %v, idle timeout %v; want direct %v, %v", tc.endpoint, b.direct != nil, tr.IdleConnTimeout, tc.direct, tc.want)
		}
	}
}

// An answer followed by bytes nobody asked for (here a second answer) leaves the
// connection unusable: the next request must not read them as its own answer.
func TestDirectDoesNotReuseConnectionsWithUnreadBytes(t *testing.T) {
	addr := serveConns(t, func(c net.Conn) {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			_, _ = io.WriteString(c, "HTTP/1.1 204 No Content\r\nEtag: W/\"fresh\"\r\n\r\nHTTP/1.1 204 No Content\r\nEtag: W/\"stale\"\r\n\r\n")
		}
	})
	d := &direct{addr: addr, host: addr}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 3 {
		a, err := d.roundTrip(ctx, &directRequest{method: http.MethodPut, requestURI: "/a/t()", body: []byte("{}")})
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got := a.get("Etag"); got != `W/"fresh"` {
			t.Fatalf("request %d read %q, an answer meant for another request", i, got)
		}
	}
}

// WithTimeout bounds an exchange on the direct path too, when the context has no
// deadline: a server that accepts and never answers costs the timeout, not a hang.
func TestDirectStopsAtTheDriversTimeout(t *testing.T) {
	addr := silentServer(t)
	d := &direct{addr: addr, host: addr, timeout: 200 * time.Millisecond}
	start := time.Now()
	_, err := d.roundTrip(context.Background(), &directRequest{method: http.MethodGet, requestURI: "/x"})
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Errorf("error %v, want no answer within the timeout", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("returned after %v", el)
	}
}

// silentServer listens on loopback, accepts connections and never answers; it returns its
// address.
func silentServer(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	return serveConns(t, func(c net.Conn) { <-done; _ = c.Close() })
}

// serveConns listens on loopback until the test ends and hands every accepted connection
// to handle in a goroutine of its own; it returns the address.
func serveConns(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return l.Addr().String()
}
