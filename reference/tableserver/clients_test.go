package tableserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
)

// servedOn serves srv on a loopback port through tableserver.Listener and stops it when the
// test ends.
func servedOn(t *testing.T, srv *tableserver.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	done := make(chan struct{})
	go func() { _ = hs.Serve(tableserver.Listener(ln)); close(done) }()
	t.Cleanup(func() {
		_ = hs.Close()
		<-done
		if n := srv.Recovered(); n != 0 {
			t.Errorf("the server recovered from %d panics", n)
		}
	})
	return ln.Addr().String()
}

// servedAnonymously serves b on a loopback port, letting requests through without
// credentials.
func servedAnonymously(t *testing.T, b api.Backend, limits tableserver.Limits) (*tableserver.Server, string) {
	t.Helper()
	srv := tableserver.New(b, tableserver.WithAllowAnonymous(), tableserver.WithLimits(limits))
	return srv, servedOn(t, srv)
}

func createTable(t *testing.T, addr, name string) {
	t.Helper()
	out := rawExchange(addr, request("POST", acct+"/Tables", []string{"Content-Type: application/json"}, []byte(`{"TableName":"`+name+`"}`)), nil, false, 10*time.Second)
	if len(out.statuses) != 1 || out.statuses[0] != http.StatusCreated {
		t.Fatalf("create table %s: %+v", name, out)
	}
}

// TestHugeTimeoutIsCappedNotOverflowed: ?timeout= beyond what a Duration holds in seconds
// means the documented 30 s cap (TMO), as any value above 30 does. Before, 9223372037 and
// larger overflowed into a deadline in the past: every operation answered 500
// OperationTimedOut.
func TestHugeTimeoutIsCappedNotOverflowed(t *testing.T) {
	_, addr := servedAnonymously(t, reference.New(), tableserver.Limits{})
	for _, v := range []string{"31", "9223372036", "9223372037", "9223372036854775807"} {
		out := rawExchange(addr, request("GET", acct+"/Tables?timeout="+v, nil, nil), nil, false, 10*time.Second)
		if len(out.statuses) != 1 || out.statuses[0] != http.StatusOK {
			t.Errorf("timeout=%s: %+v, want 200", v, out)
		}
	}
}

// slowBackend holds entity writes and queries until their context is done or a moment has
// passed, so that a client's half-close surely arrives while the work is under way.
type slowBackend struct{ api.Backend }

func (b slowBackend) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(300 * time.Millisecond):
		return nil
	}
}

func (b slowBackend) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	if err := b.wait(ctx); err != nil {
		return api.Entity{}, err
	}
	return b.Backend.InsertEntity(ctx, table, e)
}

func (b slowBackend) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	if err := b.wait(ctx); err != nil {
		return api.Page{}, err
	}
	return b.Backend.QueryEntities(ctx, table, q)
}

// TestHalfClosedClientsGetTheirAnswer: a client that sends its request and then shuts its
// sending side (legal in HTTP/1.1) gets the answer of the finished work. Before, net/http
// cancelled the request's context at the half-close and the work answered 500
// InternalError.
func TestHalfClosedClientsGetTheirAnswer(t *testing.T) {
	_, addr := servedAnonymously(t, slowBackend{reference.New()}, tableserver.Limits{})
	createTable(t, addr, "half")
	body := []byte(`{"PartitionKey":"p","RowKey":"r"}`)
	out := rawExchange(addr, request("POST", acct+"/half", []string{"Content-Type: application/json"}, body), nil, true, 10*time.Second)
	if len(out.statuses) != 1 || out.statuses[0] != http.StatusCreated {
		t.Errorf("half-closed insert: %+v, want 201", out)
	}
	out = rawExchange(addr, request("GET", acct+"/half()", nil, nil), nil, true, 10*time.Second)
	if len(out.statuses) != 1 || out.statuses[0] != http.StatusOK {
		t.Errorf("half-closed query: %+v, want 200", out)
	}
}

// TestContentLengthWithTransferEncodingClosesTheConnection: a request framed both ways is
// answered (by its Transfer-Encoding) and its connection closed (RFC 9112 6.3); an ordinary
// request keeps its connection. Before, the connection was kept open.
func TestContentLengthWithTransferEncodingClosesTheConnection(t *testing.T) {
	_, addr := servedAnonymously(t, reference.New(), tableserver.Limits{})
	createTable(t, addr, "framing")
	exchange := func(framing string, body string) (*http.Response, bool) {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "POST %s/framing HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-version: 2019-02-02\r\nContent-Type: application/json\r\n%s\r\n%s", acct, framing, body)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, err = br.ReadByte()
		return resp, err == io.EOF
	}
	entity := `{"PartitionKey":"p","RowKey":"both"}`
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(entity), entity)
	resp, closed := exchange(fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n", len(chunked)), chunked)
	if resp.StatusCode != http.StatusCreated || !closed || !resp.Close {
		t.Errorf("Content-Length with Transfer-Encoding: %d, connection closed %v (Connection: close %v); want 201 and closed", resp.StatusCode, closed, resp.Close)
	}
	entity = `{"PartitionKey":"p","RowKey":"te"}`
	chunked = fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(entity), entity)
	if resp, closed := exchange("Transfer-Encoding: chunked\r\n", chunked); resp.StatusCode != http.StatusCreated || closed {
		t.Errorf("Transfer-Encoding alone: %d, connection closed %v; want 201 and kept", resp.StatusCode, closed)
	}
}

// TestSlowBodiesDoNotStarveOthers: 600 clients whose request bodies trickle in (more than
// the 512 requests served at once) leave ordinary requests answered, and each slow body is
// refused with 400 and its connection closed once it falls behind the minimum rate. Before,
// a request waiting for its body held one of the 512 slots: the others got 503 ServerBusy.
func TestSlowBodiesDoNotStarveOthers(t *testing.T) {
	const slow = 600
	_, addr := servedAnonymously(t, reference.New(), tableserver.Limits{BodyGrace: 3 * time.Second, ReadTimeout: time.Minute})
	createTable(t, addr, "slow")
	var wg sync.WaitGroup
	results := make(chan outcome, slow)
	started := make(chan struct{}, slow)
	for range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			head := request("POST", acct+"/slow", []string{"Content-Type: application/json", "Content-Length: 1000"}, nil)
			results <- rawExchange(addr, append(head, '{'), &trickle{started: started}, false, 30*time.Second)
		}()
	}
	for range slow {
		<-started
	}
	time.Sleep(200 * time.Millisecond) // the last of them reach the handler
	busy := 0
	for i := range 50 {
		out := rawExchange(addr, request("GET", acct+"/slow()?$top=1", nil, nil), nil, false, 10*time.Second)
		if len(out.statuses) != 1 || out.statuses[0] != http.StatusOK {
			busy++
			if busy == 1 {
				t.Errorf("ordinary request %d while %d bodies trickle: %+v", i, slow, out)
			}
		}
	}
	if busy > 0 {
		t.Errorf("%d of 50 ordinary requests were not answered 200", busy)
	}
	wg.Wait()
	close(results)
	refused := 0
	for out := range results {
		if len(out.statuses) == 1 && out.statuses[0] == http.StatusBadRequest && out.codes[0] == "InvalidInput" {
			refused++
		}
	}
	if refused != slow {
		t.Errorf("%d of %d slow bodies were refused with 400 InvalidInput", refused, slow)
	}
}

// trickle is a body that sends one byte every 500 ms, forever.
type trickle struct {
	started chan struct{}
	once    sync.Once
}

func (tr *trickle) Read(p []byte) (int, error) {
	tr.once.Do(func() { tr.started <- struct{}{} })
	time.Sleep(500 * time.Millisecond)
	p[0] = ' '
	return 1, nil
}

// countingWriter is an http.ResponseWriter that keeps only the size of the largest write
// and the total.
type countingWriter struct {
	h            http.Header
	status       int
	largest, all int
}

func (w *countingWriter) Header() http.Header { return w.h }
func (w *countingWriter) WriteHeader(s int)   { w.status = s }
func (w *countingWriter) Write(p []byte) (int, error) {
	w.largest = max(w.largest, len(p))
	w.all += len(p)
	return len(p), nil
}

// TestLargePagesAreStreamed: a page of 1,000 entities of 50 KB (50 MB) is written in parts
// of at most about a MiB, without a Content-Length, and reads back whole; a small page is
// written at once with its Content-Length. Before, every answer was rendered whole before
// its first byte was written: 20 clients that did not read held a GiB.
func TestLargePagesAreStreamed(t *testing.T) {
	svc := bigTable(t)
	srv := tableserver.New(svc, tableserver.WithAllowAnonymous())
	get := func(top int) *countingWriter {
		w := &countingWriter{h: http.Header{}}
		r, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1%s/big()?$top=%d", acct, top), nil)
		r.Header.Set(wire.KeyVersion, "2019-02-02")
		r.Header.Set("Accept", "application/json;odata=nometadata")
		srv.ServeHTTP(w, r)
		return w
	}
	w := get(1000)
	if w.status != http.StatusOK || w.all < 50_000_000 {
		t.Fatalf("page of 1,000: %d, %d bytes", w.status, w.all)
	}
	if w.largest > 2<<20 || w.h.Get("Content-Length") != "" {
		t.Errorf("a 50 MB page was written with a write of %d bytes, Content-Length %q; want parts of at most 2 MiB and no Content-Length", w.largest, w.h.Get("Content-Length"))
	}
	w = get(5)
	if w.status != http.StatusOK || w.h.Get("Content-Length") != fmt.Sprint(w.all) {
		t.Errorf("a small page: %d, Content-Length %q for %d bytes", w.status, w.h.Get("Content-Length"), w.all)
	}
}

// bigTable is a Service with a table "big" of 1,000 entities of 50 KB of JSON each.
func bigTable(t testing.TB) *reference.Service {
	svc := reference.New()
	c := context.Background()
	if err := svc.CreateTable(c, "big"); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 25_000) // two of them: 50 KB of JSON per entity
	for i := range 1000 {
		if _, err := svc.InsertEntity(c, "big", api.NewEntity("p", fmt.Sprintf("%04d", i), map[string]api.Value{"a": api.String(pad), "b": api.String(pad)})); err != nil {
			t.Fatal(err)
		}
	}
	return svc
}

// TestClientsThatDoNotReadDoNotStarveOthers: while clients that never read hold large
// streamed answers, ordinary requests are served: a request waiting for its client to take
// its answer does not count against MaxConcurrentRequests. Before, each held a slot.
func TestClientsThatDoNotReadDoNotStarveOthers(t *testing.T) {
	srv, addr := servedAnonymously(t, bigTable(t), tableserver.Limits{MaxConcurrentRequests: 2})
	req := fmt.Sprintf("GET %s/big()?$top=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-version: 2019-02-02\r\nAccept: application/json;odata=nometadata\r\n\r\n", acct)
	for range 4 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 16), nil); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%v %v", resp, err)
		}
	}
	time.Sleep(300 * time.Millisecond) // their answers fill the sockets
	for i := range 5 {
		out := rawExchange(addr, request("GET", acct+"/big()?$top=1", nil, nil), nil, false, 10*time.Second)
		if len(out.statuses) != 1 || out.statuses[0] != http.StatusOK {
			t.Fatalf("ordinary request %d while 4 clients do not read: %+v (busy %d)", i, out, srv.Busy())
		}
	}
}

// A kept connection outlives the read deadline its last request's paced body had: the
// body's pace bounds that body alone, and a client that waits before its next request on
// the same connection is answered.
func TestKeptConnectionOutlivesTheBodyPace(t *testing.T) {
	const grace = 100 * time.Millisecond
	_, addr := servedAnonymously(t, reference.New(), tableserver.Limits{BodyGrace: grace, MinBodyRate: 1 << 20})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	rd := bufio.NewReader(conn)
	for i, name := range []string{"paceda", "pacedb"} {
		if i > 0 {
			time.Sleep(3 * grace) // past the deadline the first body was read under
		}
		body := `{"TableName":"` + name + `"}`
		req := fmt.Sprintf("POST %s/Tables HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-version: 2019-02-02\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", acct, len(body), body)
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
}

// With ReadTimeout no longer than BodyGrace, the first read of a body is bounded by the
// deadline net/http sets after the header section, and the reads after it by the pace: a body
// that never comes is refused, and one that keeps its pace is read to its end although it
// takes several times ReadTimeout.
func TestBodyPaceOutlastsReadTimeout(t *testing.T) {
	const step = 150 * time.Millisecond
	limits := tableserver.Limits{ReadHeaderTimeout: 2 * step, ReadTimeout: 2 * step, BodyGrace: 2 * step, MinBodyRate: 1000}
	_, addr := servedAnonymously(t, reference.New(), limits)
	createTable(t, addr, "paced")

	head := request("POST", acct+"/paced", []string{"Content-Type: application/json", "Content-Length: 100"}, nil)
	start := time.Now()
	out := rawExchange(addr, head, nil, false, 10*time.Second)
	if len(out.statuses) != 1 || out.statuses[0] != http.StatusBadRequest || out.codes[0] != "InvalidInput" {
		t.Errorf("a body that never comes: %+v; want 400 InvalidInput", out)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a body that never comes was refused after %v", took)
	}

	// 2,400 bytes at 4,000 bytes per second, in 12 writes over about 1.8 s: six times
	// ReadTimeout, at four times the minimum rate.
	entity := fmt.Sprintf(`{"PartitionKey":"p","RowKey":"r","Data":"%s"}`, strings.Repeat("x", 2400-44))
	head = request("POST", acct+"/paced", []string{"Content-Type: application/json", fmt.Sprintf("Content-Length: %d", len(entity))}, nil)
	out = rawExchange(addr, head, &steadyBody{rest: []byte(entity), chunk: 200, every: step}, false, 20*time.Second)
	if len(out.statuses) != 1 || out.statuses[0] != http.StatusCreated {
		t.Errorf("a body that keeps its pace for six times ReadTimeout: %+v; want 201", out)
	}
}

// steadyBody gives chunk bytes of rest at each read, one read every interval.
type steadyBody struct {
	rest  []byte
	chunk int
	every time.Duration
}

func (b *steadyBody) Read(p []byte) (int, error) {
	if len(b.rest) == 0 {
		return 0, io.EOF
	}
	time.Sleep(b.every)
	n := copy(p[:min(len(p), b.chunk)], b.rest)
	b.rest = b.rest[n:]
	return n, nil
}
