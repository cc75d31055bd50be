package tableserver_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver/rest"
)

// hostileLimits are short server timeouts, so that slow clients are cut off within the
// test's time.
var hostileLimits = tableserver.Limits{
	MaxConcurrentRequests: 256,
	ReadHeaderTimeout:     time.Second,
	ReadTimeout:           2 * time.Second,
	WriteTimeout:          5 * time.Second,
	IdleTimeout:           2 * time.Second,
	MaxHeaderBytes:        64 << 10,
}

// hostileServer serves a fresh reference on a loopback port with the given options and
// stops it when the test ends, checking that the panic guard never fired.
func hostileServer(t *testing.T, opts ...tableserver.Option) (*tableserver.Server, string) {
	t.Helper()
	srv := tableserver.New(reference.New(reference.WithDeleteHold(0)), opts...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	done := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(done) }()
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(c)
		_ = hs.Close()
		<-done
		if n := srv.Recovered(); n != 0 {
			t.Errorf("the server recovered from %d panics", n)
		}
	})
	return srv, ln.Addr().String()
}

// outcome is what a raw exchange got back.
type outcome struct {
	statuses []int
	codes    []string // x-ms-error-code of each answer ("" when net/http answered itself)
	dropped  bool     // the connection ended without (another) answer
}

// rawExchange writes req on a fresh connection (then, when body is non-nil, streams body
// while reading) and reads every answer until the server closes the connection or the
// deadline passes.
func rawExchange(addr string, req []byte, body io.Reader, halfClose bool, deadline time.Duration) outcome {
	var out outcome
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		out.dropped = true
		return out
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(deadline))
	_, _ = conn.Write(req)
	if body != nil {
		go func() { _, _ = io.Copy(conn, body) }()
	}
	if halfClose {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	br := bufio.NewReader(conn)
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			out.dropped = len(out.statuses) == 0
			return out
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		out.statuses = append(out.statuses, resp.StatusCode)
		out.codes = append(out.codes, resp.Header.Get(wire.HeaderErrorCode))
		if resp.Close {
			return out
		}
	}
}

// hostileCase is one malformed request.
type hostileCase struct {
	kind      string
	head      []byte    // request line, headers and whatever body bytes are sent at once
	stream    io.Reader // more body, streamed while the answer is read
	halfClose bool
	deadline  time.Duration
	// lenient marks requests a correct server may also accept: Go's JSON decoder turns
	// invalid UTF-8 into U+FFFD (RFC 8259 leaves it undefined), a timeout past 30 s is cut
	// to 30 s (TMO), the first of two comp parameters is used.
	lenient bool
	// transport marks requests that net/http itself answers before any handler runs
	// (RFC 9112: 501 for an unknown transfer coding, 505 for an unsupported version).
	transport bool
}

func request(method, target string, headers []string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-version: 2019-02-02\r\nConnection: close\r\n", method, target)
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	if body != nil && !hasHeader(headers, "Content-Length") && !hasHeader(headers, "Transfer-Encoding") {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

func hasHeader(headers []string, name string) bool {
	for _, h := range headers {
		if strings.HasPrefix(strings.ToLower(h), strings.ToLower(name)+":") {
			return true
		}
	}
	return false
}

// zeroReader yields n bytes of 'x' without holding them.
type zeroReader struct{ left int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), z.left)
	for i := range p[:n] {
		p[i] = 'x'
	}
	z.left -= n
	return int(n), nil
}

// slowReader yields one byte a second, n times.
type slowReader struct{ left int }

func (s *slowReader) Read(p []byte) (int, error) {
	if s.left <= 0 || len(p) == 0 {
		return 0, io.EOF
	}
	time.Sleep(time.Second)
	s.left--
	p[0] = '{'
	return 1, nil
}

const acct = "/" + tableserver.DevAccountName

// hostileCases returns the malformed requests, n rounds of random variants of each kind.
func hostileCases(rng *rand.Rand, rounds int) []hostileCase {
	entity := acct + "/hostile"
	validBatchCT, validBatch := wire.EncodeBatchRequest("batch_b", "changeset_c", wire.BatchRequest{Changesets: [][]wire.RequestPart{{
		{Method: "POST", URL: "http://127.0.0.1" + entity, Header: wire.Fields{{Name: "Content-Type", Value: "application/json"}}, Body: []byte(`{"PartitionKey":"p","RowKey":"r"}`)},
	}}})
	jsonCT := "Content-Type: application/json"
	garbage := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	mutate := func(b []byte) []byte {
		c := append([]byte(nil), b...)
		for range 1 + rng.IntN(8) {
			switch i := rng.IntN(len(c)); rng.IntN(3) {
			case 0:
				c[i] = byte(rng.IntN(256))
			case 1:
				c = append(c[:i], c[min(len(c), i+1+rng.IntN(16)):]...)
			default:
				c = append(c[:i], append(garbage(1+rng.IntN(8)), c[i:]...)...)
			}
			if len(c) == 0 {
				c = []byte{'{'}
			}
		}
		return c
	}
	validEntity := []byte(`{"PartitionKey":"p","RowKey":"r","s":"text","n@odata.type":"Edm.Int64","n":"5"}`)
	var cs []hostileCase
	add := func(kind string, head []byte) { cs = append(cs, hostileCase{kind: kind, head: head}) }
	addLenient := func(kind string, head []byte) { cs = append(cs, hostileCase{kind: kind, head: head, lenient: true}) }
	for round := range rounds {
		// Large requests are fewer: each costs the server a few milliseconds of parsing.
		large := round%8 == 0
		// Bodies that are cut short, or whose Content-Length lies.
		body := validEntity[:1+rng.IntN(len(validEntity)-1)]
		cs = append(cs, hostileCase{kind: "truncated body", halfClose: true,
			head: request("POST", entity, []string{jsonCT, "Content-Length: " + strconv.Itoa(len(validEntity))}, body)})
		add("Content-Length too small", request("POST", entity, []string{jsonCT, "Content-Length: " + strconv.Itoa(rng.IntN(len(validEntity)))}, validEntity))
		add("Content-Length not a number", request("POST", entity, []string{jsonCT, "Content-Length: 1x"}, validEntity))
		add("two Content-Lengths", request("POST", entity, []string{jsonCT, "Content-Length: 3", "Content-Length: 4"}, []byte("{}  ")))
		add("Content-Length with Transfer-Encoding", request("POST", entity, []string{jsonCT, "Content-Length: 2", "Transfer-Encoding: chunked"}, []byte("0\r\n\r\n")))
		add("bad chunk size", request("POST", entity, []string{jsonCT, "Transfer-Encoding: chunked"}, []byte("zz\r\n{}\r\n0\r\n\r\n")))
		// Invalid UTF-8 in bodies, keys, paths and options.
		addLenient("invalid UTF-8 in a value", request("POST", entity, []string{jsonCT}, []byte("{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"s\":\"\xff\xfe\"}")))
		addLenient("invalid UTF-8 in a key", request("POST", entity, []string{jsonCT}, []byte("{\"PartitionKey\":\"\xc3\x28\",\"RowKey\":\"r\"}")))
		addLenient("invalid UTF-8 in a name", request("POST", entity, []string{jsonCT}, []byte("{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"\xed\xa0\x80\":1}")))
		add("invalid UTF-8 in the path", request("GET", entity+"(PartitionKey='%ff',RowKey='%c3%28')", nil, nil))
		addLenient("invalid UTF-8 in $filter", request("GET", entity+"()?$filter=PartitionKey%20eq%20'%ff%fe'", nil, nil))
		add("invalid UTF-8 in a table name", request("POST", acct+"/Tables", []string{jsonCT}, []byte("{\"TableName\":\"t\xff\xfe\"}")))
		// Deep, huge and wide JSON.
		if large {
			depth := 1000 + rng.IntN(200000)
			add("deeply nested JSON", request("POST", entity, []string{jsonCT},
				[]byte(`{"PartitionKey":"p","RowKey":"r","x":`+strings.Repeat("[", depth)+strings.Repeat("]", depth)+"}")))
			add("deeply nested objects", request("POST", entity, []string{jsonCT},
				[]byte(strings.Repeat(`{"a":`, 5000)+"1"+strings.Repeat("}", 5000))))
			var wide bytes.Buffer
			wide.WriteString(`{"PartitionKey":"p","RowKey":"wide"`)
			for i := range 2000 + rng.IntN(3000) {
				fmt.Fprintf(&wide, `,"p%d":%d`, i, i)
			}
			wide.WriteString("}")
			add("thousands of properties", request("POST", entity, []string{jsonCT}, wide.Bytes()))
			add("huge string value", request("POST", entity, []string{jsonCT},
				[]byte(`{"PartitionKey":"p","RowKey":"big","s":"`+strings.Repeat("a", 1<<20+rng.IntN(2<<20))+`"}`)))
			add("huge key", request("POST", entity, []string{jsonCT},
				[]byte(`{"PartitionKey":"`+strings.Repeat("k", 2000+rng.IntN(100000))+`","RowKey":"r"}`)))
		}
		add("garbled JSON", request("POST", entity, []string{jsonCT}, mutate(validEntity)))
		add("garbled table JSON", request("POST", acct+"/Tables", []string{jsonCT}, mutate([]byte(`{"TableName":"hostile2"}`))))
		add("JSON of the wrong shape", request("POST", entity, []string{jsonCT}, []byte([]string{`[]`, `null`, `"s"`, `1e999`, `{"PartitionKey":1,"RowKey":[]}`, `{"PartitionKey":"p","RowKey":"r","x@odata.type":"Edm.Nope","x":1}`}[rng.IntN(6)])))
		// Unknown and odd methods.
		add("unknown method", request([]string{"FOO", "PROPFIND", "TRACE", "OPTIONS", "get", "M-SEARCH", "BREW"}[rng.IntN(7)], acct+"/Tables", nil, nil))
		add("merge on a table", request("MERGE", acct+"/Tables", []string{jsonCT}, []byte("{}")))
		add("X-HTTP-Method garbage", request("POST", entity+"(PartitionKey='p',RowKey='r')", []string{jsonCT, "X-HTTP-Method: " + string(garbage(4))}, []byte("{}")))
		// Path tricks.
		for _, p := range []string{
			"/../" + tableserver.DevAccountName + "/Tables", acct + "/../Tables", "/%2e%2e/" + tableserver.DevAccountName + "/Tables",
			acct + "/%2e%2e/Tables", acct + "/hostile/%2e%2e", acct + "/./Tables", acct + "//Tables", acct + "/Tables/..",
			entity + "(PartitionKey=%2527p%2527,RowKey=%2527r%2527)",
			entity + "(PartitionKey='p%00',RowKey='r')", acct + "/host%00ile", acct + "%00/Tables", entity + "(PartitionKey='p'',RowKey='r')",
			entity + "(PartitionKey='p',RowKey='r',X='y')", entity + "(PartitionKey='p',RowKey='r')/x", acct + "/Tables('')",
			acct + "/Tables('%2e%2e')", entity + "()?$filter=" + strings.Repeat("(", 500) + "true" + strings.Repeat(")", 500),
			entity + "()?$top=99999999999999999999", entity + "()?NextPartitionKey=%ff&NextRowKey=x",
			entity + "()?$select=" + strings.Repeat("a,", 3000), "*", acct + "\\Tables", "/" + strings.Repeat("a/", 2000),
			acct + "/" + strings.Repeat("t", 300), entity + "?comp=" + strings.Repeat("x", 100),
		} {
			add("path trick", request([]string{"GET", "DELETE", "PUT", "POST"}[rng.IntN(4)], p, []string{jsonCT}, []byte("{}")))
		}
		add("NUL in the request line", []byte("GET "+acct+"/Tab\x00les HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
		add("NUL in a header", request("GET", acct+"/Tables", []string{"x-ms-client-request-id: a\x00b"}, nil))
		add("bare LF and spaces", []byte("GET  "+acct+"/Tables  HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n\n"))
		add("garbage request", append(garbage(1+rng.IntN(512)), "\r\n\r\n"...))
		addLenient("garbled request line", mutate(request("GET", acct+"/Tables", nil, nil)))
		// Headers.
		add("huge header", request("GET", acct+"/Tables", []string{"x-ms-client-request-id: " + strings.Repeat("h", 70<<10)}, nil))
		many := make([]string, 0, 10000)
		for i := range 10000 {
			many = append(many, fmt.Sprintf("x-h%d: v", i))
		}
		add("thousands of headers", request("GET", acct+"/Tables", many, nil))
		add("huge request line", request("GET", acct+"/Tables?x="+strings.Repeat("q", 80<<10), nil, nil))
		add("header without colon", request("GET", acct+"/Tables", []string{"NoColonHere"}, nil))
		add("garbled authorization", request("GET", acct+"/Tables", []string{"Authorization: " + []string{"SharedKey", "SharedKey :", "SharedKey a:", "SharedKeyLite devstoreaccount1:" + string(garbage(8)), "Bearer x", "SharedKey devstoreaccount1:abc"}[rng.IntN(6)]}, nil))
		add("bad dates", request("GET", acct+"/Tables", []string{"Authorization: SharedKey devstoreaccount1:abc", "x-ms-date: " + []string{"yesterday", "", "Mon, 01 Jan 0001 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT"}[rng.IntN(4)]}, nil))
		add("bad If-Match", request("PUT", entity+"(PartitionKey='p',RowKey='r')", []string{jsonCT, "If-Match: " + []string{`"`, `W/`, `""""`, "*,*", "\"\xff\""}[rng.IntN(5)]}, []byte("{}")))
		add("Atom Accept", request("GET", entity+"()", []string{"Accept: application/atom+xml"}, nil))
		addLenient("odd Accept", request("GET", entity+"()", []string{"Accept: " + []string{"application/json;odata=everything", "text/html", "*/*;q=x"}[rng.IntN(3)]}, nil))
		addLenient("odd but valid", request([]string{"GET", "PUT"}[rng.IntN(2)], []string{entity + "()?timeout=99999999999999", entity + "?comp=acl&comp=list",
			entity + "(PartitionKey='%2527',RowKey='a')"}[rng.IntN(3)], []string{jsonCT}, []byte("{}")))
		add("bad Content-Type", request("POST", entity, []string{"Content-Type: " + []string{"text/plain", "application/xml", "multipart/mixed", "application/json; charset=ebcdic"}[rng.IntN(4)]}, validEntity))
		add("SAS garbage", request("GET", entity+"()?sv=2019-02-02&tn=hostile&sp=r&se=2099-01-01&spk=%ff&sig="+strconv.Itoa(rng.IntN(1e9)), nil, nil))
		// Batches.
		addLenient("garbled batch", request("POST", acct+"/$batch", []string{"Content-Type: " + validBatchCT}, mutate(validBatch)))
		add("batch without boundary", request("POST", acct+"/$batch", []string{"Content-Type: multipart/mixed"}, validBatch))
		add("batch of garbage", request("POST", acct+"/$batch", []string{"Content-Type: multipart/mixed; boundary=x"}, garbage(1+rng.IntN(4096))))
		nested := bytes.Repeat([]byte("--b\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"), 2000)
		if large {
			add("deeply nested batch", request("POST", acct+"/$batch", []string{"Content-Type: multipart/mixed; boundary=b"}, nested))
		}
		// Transport-level refusals answered by net/http itself.
		cs = append(cs,
			hostileCase{kind: "unknown transfer coding", transport: true, head: request("POST", entity, []string{jsonCT, "Transfer-Encoding: gzip"}, []byte("{}"))},
			hostileCase{kind: "HTTP/2.0 request line", transport: true, head: []byte("GET " + acct + "/Tables HTTP/2.0\r\nHost: x\r\n\r\n")},
		)
	}
	// Bodies too large to accept: declared, and streamed without a length.
	const hundredMB = 100 << 20
	for range 2 {
		cs = append(cs,
			hostileCase{kind: "100 MB declared body", head: request("POST", entity, []string{jsonCT, "Content-Length: " + strconv.Itoa(hundredMB)}, nil), stream: &zeroReader{left: hundredMB}},
			hostileCase{kind: "100 MB chunked body", head: request("POST", acct+"/$batch", []string{"Content-Type: multipart/mixed; boundary=b", "Transfer-Encoding: chunked"}, nil), stream: &chunkedReader{r: &zeroReader{left: hundredMB}}},
		)
	}
	return cs
}

// chunkedReader frames r in HTTP/1.1 chunks of at most 32 KiB.
type chunkedReader struct {
	r   io.Reader
	buf bytes.Buffer
	eof bool
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	for c.buf.Len() == 0 {
		if c.eof {
			return 0, io.EOF
		}
		chunk := make([]byte, 32<<10)
		n, err := c.r.Read(chunk)
		if n > 0 {
			fmt.Fprintf(&c.buf, "%x\r\n", n)
			c.buf.Write(chunk[:n])
			c.buf.WriteString("\r\n")
		}
		if err != nil {
			c.buf.WriteString("0\r\n\r\n")
			c.eof = true
		}
	}
	return c.buf.Read(p)
}

// slowCases send a byte a second: in the headers (cut off by ReadHeaderTimeout) or in the
// body (cut off by ReadTimeout).
func slowCases(n int) []hostileCase {
	var cs []hostileCase
	for i := range n {
		if i%2 == 0 {
			cs = append(cs, hostileCase{kind: "slow headers", head: []byte("GET " + acct + "/Tables HTTP/1.1\r\n"), stream: &slowReader{left: 30}, deadline: 8 * time.Second})
		} else {
			cs = append(cs, hostileCase{kind: "slow body", head: request("POST", acct+"/hostile", []string{"Content-Type: application/json", "Content-Length: 30"}, nil), stream: &slowReader{left: 30}, deadline: 8 * time.Second})
		}
	}
	return cs
}

// heapSampler records the peak of the live heap while it runs.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap(every time.Duration) *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > h.peak.Load() {
				h.peak.Store(ms.HeapInuse)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

// correctClient writes to its own table while the hostile clients run and remembers every
// acknowledged write: the last acknowledged ETag and value of each entity.
type correctClient struct {
	b     *rest.Backend
	table string
	acked map[string]ackedWrite
	fails []string
}

type ackedWrite struct {
	etag  string
	value int64
}

func (c *correctClient) run(ctx context.Context, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		rk := fmt.Sprintf("r%05d", i)
		e, err := c.b.InsertEntity(ctx, c.table, api.NewEntity("p", rk, map[string]api.Value{"v": api.Int64(int64(i))}))
		if err != nil {
			c.fails = append(c.fails, fmt.Sprintf("insert %s: %v", rk, err))
			continue
		}
		c.acked[rk] = ackedWrite{etag: e.ETag, value: int64(i)}
		if i%3 == 0 {
			etag, err := c.b.UpdateEntity(ctx, c.table, api.NewEntity("p", rk, map[string]api.Value{"v": api.Int64(int64(-i))}), api.Replace, e.ETag)
			if err != nil {
				c.fails = append(c.fails, fmt.Sprintf("update %s: %v", rk, err))
				continue
			}
			c.acked[rk] = ackedWrite{etag: etag, value: int64(-i)}
		}
		time.Sleep(5 * time.Millisecond)
		if i%10 == 0 {
			ops := []api.BatchOp{
				{Kind: api.BatchInsert, Entity: api.NewEntity("p", rk+"b1", map[string]api.Value{"v": api.Int64(1)})},
				{Kind: api.BatchInsert, Entity: api.NewEntity("p", rk+"b2", map[string]api.Value{"v": api.Int64(2)})},
			}
			res, err := c.b.SubmitBatch(ctx, c.table, ops)
			if err != nil {
				c.fails = append(c.fails, fmt.Sprintf("batch %s: %v", rk, err))
				continue
			}
			c.acked[rk+"b1"] = ackedWrite{etag: res[0].ETag, value: 1}
			c.acked[rk+"b2"] = ackedWrite{etag: res[1].ETag, value: 2}
		}
	}
}

// verify reads the whole table back and checks every acknowledged write.
func (c *correctClient) verify(ctx context.Context, t *testing.T) {
	t.Helper()
	seen := map[string]api.Entity{}
	q := api.Query{}
	for {
		p, err := c.b.QueryEntities(ctx, c.table, q)
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		for _, e := range p.Entities {
			seen[e.RowKey] = e
		}
		if p.Continuation.IsZero() {
			break
		}
		q.Continuation = p.Continuation
	}
	for rk, w := range c.acked {
		e, ok := seen[rk]
		if !ok {
			t.Errorf("acknowledged write of %s is missing", rk)
			continue
		}
		if e.ETag != w.etag || !e.Properties["v"].Equal(api.Int64(w.value)) {
			t.Errorf("%s: ETag %s value %v, last acknowledged %s %d", rk, e.ETag, e.Properties["v"], w.etag, w.value)
		}
	}
	if len(seen) != len(c.acked) {
		t.Errorf("the table holds %d entities, %d were acknowledged", len(seen), len(c.acked))
	}
}

// TestHostileClientsGet4xxAndLoseNothing sends thousands of malformed requests from
// several connections at once, with slow clients and 100 MB bodies among them, while a
// correct client writes beside them. Every answer the handler gives must be a 4xx with a
// documented error code, the server must stay up with a bounded heap, and every write the
// correct client saw acknowledged must be there afterwards.
func TestHostileClientsGet4xxAndLoseNothing(t *testing.T) {
	srv, addr := hostileServer(t, tableserver.WithAllowAnonymous(), tableserver.WithLimits(hostileLimits))
	c, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	good, err := rest.New(devConnectionString("http://"+addr+acct), rest.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"hostile", "goodclient"} {
		if err := good.CreateTable(c, table); err != nil {
			t.Fatal(err)
		}
	}

	runtime.GC()
	heap := sampleHeap(10 * time.Millisecond)
	start := time.Now()

	correct := &correctClient{b: good, table: "goodclient", acked: map[string]ackedWrite{}}
	stopCorrect := make(chan struct{})
	correctDone := make(chan struct{})
	go func() { defer close(correctDone); correct.run(c, stopCorrect) }()

	rng := rand.New(rand.NewPCG(1, 2))
	cases := hostileCases(rng, 32)
	rng.Shuffle(len(cases), func(i, j int) { cases[i], cases[j] = cases[j], cases[i] })
	slow := slowCases(16)

	type tally struct {
		sent, answered, dropped, fourxx, fivexx, transport5xx, undocumented, otherStatus, lenient int
		fivexxKinds, otherKinds                                                                   map[string]int
	}
	tl := tally{fivexxKinds: map[string]int{}, otherKinds: map[string]int{}}
	var mu sync.Mutex
	record := func(hc hostileCase, o outcome) {
		mu.Lock()
		defer mu.Unlock()
		tl.sent++
		if o.dropped {
			tl.dropped++
		}
		for i, st := range o.statuses {
			tl.answered++
			code := o.codes[i]
			switch {
			case st >= 500 && hc.transport && (st == http.StatusNotImplemented || st == http.StatusHTTPVersionNotSupported):
				tl.transport5xx++
			case st >= 500:
				tl.fivexx++
				tl.fivexxKinds[fmt.Sprintf("%s: %d %s", hc.kind, st, code)]++
			case st >= 400:
				tl.fourxx++
				if _, ok := spec.LookupErrorCode(code); code != "" && !ok {
					tl.undocumented++
					tl.otherKinds[fmt.Sprintf("%s: %d undocumented code %q", hc.kind, st, code)]++
				}
			case hc.lenient:
				tl.lenient++
			default:
				tl.otherStatus++
				tl.otherKinds[fmt.Sprintf("%s: %d %.120q", hc.kind, st, hc.head)]++
			}
		}
	}

	var wg sync.WaitGroup
	for _, hc := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			record(hc, rawExchange(addr, hc.head, hc.stream, false, hc.deadline))
		}()
	}
	work := make(chan hostileCase)
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for hc := range work {
				d := hc.deadline
				if d == 0 {
					d = 10 * time.Second
				}
				record(hc, rawExchange(addr, hc.head, hc.stream, hc.halfClose, d))
			}
		}()
	}
	// The run stops sending when its time budget is spent, so that a loaded machine (or
	// the race detector) makes it shorter, not longer.
	budget := time.After(30 * time.Second)
	sent := 0
send:
	for _, hc := range cases {
		select {
		case work <- hc:
			sent++
		case <-budget:
			t.Logf("time budget spent after %d of %d malformed requests", sent, len(cases))
			break send
		}
	}
	close(work)
	wg.Wait()
	close(stopCorrect)
	<-correctDone
	elapsed := time.Since(start)
	peak := heap.Stop()

	for _, f := range correct.fails {
		t.Errorf("correct client: %s", f)
	}
	vc, vcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer vcancel()
	correct.verify(vc, t)
	if err := good.DeleteTable(vc, "hostile"); err != nil {
		t.Errorf("the server does not work after the hostile run: %v", err)
	}

	t.Logf("hostile run: %d malformed requests (+%d slow clients) in %v: %d answers, %d 4xx, %d 5xx, %d net/http 501/505, %d lenient 2xx, %d connections dropped without an answer; correct client: %d acknowledged writes; peak heap in use %.1f MiB",
		sent, len(slow), elapsed.Round(time.Millisecond), tl.answered, tl.fourxx, tl.fivexx, tl.transport5xx, tl.lenient, tl.dropped, len(correct.acked), float64(peak)/(1<<20))
	if tl.sent != sent+len(slow) {
		t.Errorf("%d exchanges recorded, %d sent", tl.sent, sent+len(slow))
	}
	if sent < 1000 {
		t.Errorf("only %d malformed requests were sent", sent)
	}
	if tl.fivexx != 0 {
		t.Errorf("%d answers were 5xx: %v", tl.fivexx, tl.fivexxKinds)
	}
	if tl.undocumented != 0 || tl.otherStatus != 0 {
		t.Errorf("answers that are not documented 4xx: %v", tl.otherKinds)
	}
	if tl.fourxx < sent/2 {
		t.Errorf("only %d of %d malformed requests got a 4xx", tl.fourxx, sent)
	}
	if len(correct.acked) < 20 {
		t.Errorf("the correct client got only %d writes through", len(correct.acked))
	}
	// Bodies are bounded at spec.MaxRequestBodyBytes per request and requests at
	// MaxConcurrentRequests; with 28 clients at once the live heap must stay far below
	// what two 100 MB bodies would take.
	const heapBound = 192 << 20
	if peak > heapBound {
		t.Errorf("peak heap in use %d MiB exceeds %d MiB", peak>>20, heapBound>>20)
	}
	if srv.Busy() != 0 {
		t.Errorf("%d requests were refused as busy", srv.Busy())
	}
}

// blockingBackend holds every QueryTables call until release is closed.
type blockingBackend struct {
	api.Backend
	entered chan struct{}
	release chan struct{}
}

func (b *blockingBackend) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
		return api.TablePage{}, ctx.Err()
	}
	return b.Backend.QueryTables(ctx, q)
}

// TestConcurrencyBoundAnswersServerBusy fills the server's request slots with requests
// that wait in the backend; the next request is answered 503 ServerBusy at once, and once
// the slots free up requests succeed again.
func TestConcurrencyBoundAnswersServerBusy(t *testing.T) {
	bb := &blockingBackend{Backend: reference.New(), entered: make(chan struct{}, 4), release: make(chan struct{})}
	srv := tableserver.New(bb, tableserver.WithAllowAnonymous(), tableserver.WithLimits(tableserver.Limits{MaxConcurrentRequests: 2}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	url := "http://" + ln.Addr().String() + acct + "/Tables"
	get := func() (int, string) {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(c, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get(wire.HeaderErrorCode)
	}
	results := make(chan int, 2)
	for range 2 {
		go func() { st, _ := get(); results <- st }()
	}
	for range 2 {
		select {
		case <-bb.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the first requests never reached the backend")
		}
	}
	if st, code := get(); st != http.StatusServiceUnavailable || code != spec.ErrServerBusy.Code {
		t.Errorf("third request: %d %s, want 503 ServerBusy", st, code)
	}
	close(bb.release)
	for range 2 {
		if st := <-results; st != http.StatusOK {
			t.Errorf("held request: %d", st)
		}
	}
	if st, code := get(); st != http.StatusOK {
		t.Errorf("after release: %d %s", st, code)
	}
	if srv.Busy() != 1 {
		t.Errorf("Busy = %d, want 1", srv.Busy())
	}
}
