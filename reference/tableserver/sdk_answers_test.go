package tableserver_test

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
)

var updateAnswers = flag.Bool("update", false, "rewrite testdata/sdk_answers.golden from this server's answers")

// The requests of the SDK ceiling (bench.BenchmarkSDKCeiling) as aztables v1.4.1 sends
// them: its header fields in its order, signed with Shared Key Lite. The server's clocks
// are fixed, so that its answers are the same bytes on every run but for the request id.
const (
	sdkHost      = "127.0.0.1:10002"
	sdkTable     = "sdkceiling"
	sdkUserAgent = "azsdk-go-aztables/v1.4.1 (go1.26.8; linux)"
	sdkAcceptMin = "application/json;odata=minimalmetadata"
	sdkJSON      = "application/json"
	sdkPayload   = "hijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqr"
)

var sdkClock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// sdkRequest is one request of the ceiling; appendTo writes it as aztables does.
type sdkRequest struct {
	method, path, rawQuery, accept string
	body                           []byte // nil: no body, no Content-Type
}

var sdkDevKey, _ = base64.StdEncoding.DecodeString(tableserver.DevAccountKey)

// appendTo appends the request, signed with mac (HMAC-SHA256 with the account key) and
// scratch for the string to sign. None of the ceiling's requests has a comp parameter, so
// the string to sign of Shared Key Lite is the date and "/account/path" (EVIDENCE.md 7.1).
func (r sdkRequest) appendTo(dst []byte, mac hash.Hash, scratch *[]byte) []byte {
	date := wire.HTTPDate(sdkClock)
	dst = append(dst, r.method...)
	dst = append(dst, ' ')
	dst = append(dst, r.path...)
	if r.rawQuery != "" {
		dst = append(dst, '?')
		dst = append(dst, r.rawQuery...)
	}
	dst = append(dst, " HTTP/1.1\r\nHost: "+sdkHost+"\r\nUser-Agent: "+sdkUserAgent+"\r\n"...)
	if r.body != nil {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(r.body)), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "Accept: "...)
	dst = append(dst, r.accept...)
	dst = append(dst, "\r\nAuthorization: "...)
	sts := append((*scratch)[:0], date...)
	sts = append(sts, "\n/"+tableserver.DevAccountName...)
	sts = append(sts, r.path...)
	mac.Reset()
	mac.Write(sts)
	*scratch = mac.Sum(sts[:0])
	dst = append(dst, "SharedKeyLite "+tableserver.DevAccountName+":"...)
	dst = base64.StdEncoding.AppendEncode(dst, *scratch)
	if r.body != nil {
		dst = append(dst, "\r\nContent-Type: "+sdkJSON...)
	}
	dst = append(dst, "\r\nDataServiceVersion: 3.0\r\nX-Ms-Date: "...)
	dst = append(dst, date...)
	dst = append(dst, "\r\nx-ms-version: 2019-02-02\r\nAccept-Encoding: gzip\r\n\r\n"...)
	return append(dst, r.body...)
}

// appendSDKEntity appends the body aztables sends for an entity of the ceiling (its
// properties in the order it marshals them).
func appendSDKEntity[K string | []byte](dst []byte, pk string, rk K, seq int) []byte {
	dst = append(dst, `{"Data":"`...)
	dst = append(dst, pk...)
	dst = append(dst, '/')
	dst = append(dst, rk...)
	dst = append(dst, ':')
	dst = append(dst, sdkPayload...)
	dst = append(dst, `","PartitionKey":"`...)
	dst = append(dst, pk...)
	dst = append(dst, `","RowKey":"`...)
	dst = append(dst, rk...)
	dst = append(dst, `","Seq":"`...)
	dst = strconv.AppendInt(dst, int64(seq), 10)
	return append(dst, `","Seq@odata.type":"Edm.Int64"}`...)
}

func sdkEntityPath(pk, rk string) string {
	return "/" + tableserver.DevAccountName + "/" + sdkTable + "(PartitionKey='" + pk + "',RowKey='" + rk + "')"
}

// sdkBuffers hold the keys and bodies of requests being made, so that making one allocates
// nothing.
type sdkBuffers struct{ key, body []byte }

// The ceiling's phases: what each sends for its n-th request.
var sdkPhases = []struct {
	name    string
	request func(b *sdkBuffers, n int) sdkRequest
}{
	{"insert", func(b *sdkBuffers, n int) sdkRequest {
		b.key = append(b.key[:0], "i00-1-"...)
		for d := 1000000000; d > 0; d /= 10 {
			b.key = append(b.key, byte('0'+n/d%10))
		}
		b.body = appendSDKEntity(b.body[:0], "w", b.key, n)
		return sdkRequest{method: "POST", path: "/" + tableserver.DevAccountName + "/" + sdkTable, accept: sdkAcceptMin, body: b.body}
	}},
	{"get", func(_ *sdkBuffers, n int) sdkRequest {
		return sdkRequest{method: "GET", path: sdkGetPaths[n%len(sdkGetPaths)], accept: sdkAcceptMin}
	}},
	{"merge-upsert", func(b *sdkBuffers, n int) sdkRequest {
		i := n % len(sdkUpsertKeys)
		b.body = appendSDKEntity(b.body[:0], "u", sdkUpsertKeys[i], n)
		return sdkRequest{method: "PATCH", path: sdkUpsertPaths[i], accept: sdkJSON, body: b.body}
	}},
	{"query20", func(_ *sdkBuffers, n int) sdkRequest {
		return sdkRequest{method: "GET", path: "/" + tableserver.DevAccountName + "/" + sdkTable + "()", rawQuery: "%24filter=PartitionKey+eq+%27q%27", accept: sdkAcceptMin}
	}},
}

var sdkGetPaths, sdkUpsertKeys, sdkUpsertPaths = func() (gets, keys, paths []string) {
	for i := 0; i < 20; i++ {
		gets = append(gets, sdkEntityPath("q", fmt.Sprintf("r%03d", i)))
	}
	for i := 0; i < 1000; i += 7 {
		keys = append(keys, fmt.Sprintf("u%04d", i))
		paths = append(paths, sdkEntityPath("u", keys[len(keys)-1]))
	}
	return gets, keys, paths
}()

// sdkConn is a client connection that writes raw requests and reads raw answers.
type sdkConn struct {
	conn    net.Conn
	rd      *bufio.Reader
	out     []byte
	mac     hash.Hash
	scratch []byte
}

// startSDKServer serves a fresh reference with fixed clocks, loads the ceiling's table (20
// rows in partition q) and returns a connection to it.
func startSDKServer(tb testing.TB) *sdkConn {
	tb.Helper()
	clock := func() time.Time { return sdkClock }
	srv := tableserver.New(reference.New(reference.WithClock(clock), reference.WithDeleteHold(0)), tableserver.WithClock(clock))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	hs := srv.HTTPServer("")
	go func() { _ = hs.Serve(ln) }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = conn.Close()
		_ = hs.Close()
		if n := srv.Recovered(); n != 0 {
			tb.Errorf("the server recovered from %d panics", n)
		}
	})
	c := &sdkConn{conn: conn, rd: bufio.NewReaderSize(conn, 64<<10), mac: hmac.New(sha256.New, sdkDevKey)}
	create := sdkRequest{method: "POST", path: "/" + tableserver.DevAccountName + "/Tables", accept: sdkAcceptMin, body: []byte(`{"TableName":"` + sdkTable + `"}`)}
	if status, _ := c.roundTrip(create, nil); status != 201 {
		tb.Fatalf("create table: status %d", status)
	}
	for i := 0; i < 20; i++ {
		rk := fmt.Sprintf("r%03d", i)
		load := sdkRequest{method: "POST", path: "/" + tableserver.DevAccountName + "/" + sdkTable, accept: sdkAcceptMin, body: appendSDKEntity(nil, "q", rk, i)}
		if status, _ := c.roundTrip(load, nil); status != 201 {
			tb.Fatalf("load %s: status %d", rk, status)
		}
	}
	return c
}

// roundTrip sends r and reads the answer; raw, when not nil, receives its bytes.
func (c *sdkConn) roundTrip(r sdkRequest, raw *bytes.Buffer) (int, error) {
	c.out = r.appendTo(c.out[:0], c.mac, &c.scratch)
	if _, err := c.conn.Write(c.out); err != nil {
		return 0, err
	}
	status, length := 0, 0
	for first := true; ; first = false {
		line, err := c.rd.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if raw != nil {
			raw.Write(line)
		}
		line = bytes.TrimRight(line, "\r\n")
		if first {
			if len(line) < 12 {
				return 0, errors.New("short status line")
			}
			status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
			continue
		}
		if len(line) == 0 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			length = 0
			for _, d := range v {
				length = length*10 + int(d-'0')
			}
		}
	}
	if raw != nil {
		_, err := io.CopyN(raw, c.rd, int64(length))
		return status, err
	}
	_, err := c.rd.Discard(length)
	return status, err
}

var requestID = regexp.MustCompile(`(?m)^(X-Ms-Request-Id: )[0-9a-f-]{36}\r$`)

// TestSDKCeilingAnswers checks the answers to the SDK ceiling's requests byte for byte:
// the do-nothing server of the ceiling replays them, so an optimisation that changes a
// byte changes what the benchmark compares. Rewrite with -update after a deliberate change.
func TestSDKCeilingAnswers(t *testing.T) {
	c := startSDKServer(t)
	var got bytes.Buffer
	var buf sdkBuffers
	for _, p := range sdkPhases {
		for n := 0; n < 2; n++ {
			fmt.Fprintf(&got, "=== %s %d\n", p.name, n)
			var raw bytes.Buffer
			if _, err := c.roundTrip(p.request(&buf, n), &raw); err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			got.Write(requestID.ReplaceAll(raw.Bytes(), []byte("${1}REQUEST-ID\r")))
			got.WriteString("\n")
		}
	}
	golden := filepath.Join("testdata", "sdk_answers.golden")
	if *updateAnswers {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w []byte
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if !bytes.Equal(g, w) {
				t.Fatalf("answers differ from %s at line %d:\n got: %q\nwant: %q", golden, i+1, g, w)
			}
		}
	}
}

// BenchmarkSDKCeilingServer measures the server's side of the SDK ceiling's requests over
// a loopback connection, one request at a time; the client writes prepared bytes and
// allocates nothing, so allocs/op are the server's (net/http's and the handler's). Beside
// the reference (server=reference-http) it serves the same requests with a do-nothing
// handler (server=noop) that replays the reference's answer to the phase's first request,
// as bench.BenchmarkSDKCeiling's do-nothing server does: the two differ by the
// reference's own work alone. Counted with callgrind (instructions of N and of 3N
// requests, less setup), their ratio is the server CPU share, repeatable on a busy machine.
func BenchmarkSDKCeilingServer(b *testing.B) {
	for _, p := range sdkPhases {
		for _, server := range []string{"reference-http", "noop"} {
			b.Run("op="+p.name+"/server="+server, func(b *testing.B) {
				c := startSDKServer(b)
				var buf sdkBuffers
				if server == "noop" {
					var raw bytes.Buffer
					if _, err := c.roundTrip(p.request(&buf, 0), &raw); err != nil {
						b.Fatal(err)
					}
					c = startReplayServer(b, raw.Bytes())
				}
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					status, err := c.roundTrip(p.request(&buf, n), nil)
					if err != nil || status >= 300 && status != 404 {
						b.Fatalf("%s %d: status %d, %v", p.name, n, status, err)
					}
					n++
				}
			})
		}
	}
}

// startReplayServer serves every request with the recorded answer raw (status line,
// header fields, body), reading and discarding the request's body, from an http.Server
// configured as the reference's, and returns a connection to it.
func startReplayServer(tb testing.TB, raw []byte) *sdkConn {
	tb.Helper()
	ans, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := io.ReadAll(ans.Body)
	if err != nil {
		tb.Fatal(err)
	}
	replay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		for k, v := range ans.Header {
			h[k] = v
		}
		w.WriteHeader(ans.StatusCode)
		_, _ = w.Write(body)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	// The reference's http.Server (timeouts, connection context), so that the two servers
	// differ by their handlers alone.
	hs := tableserver.New(reference.New()).HTTPServer("")
	hs.Handler = replay
	go func() { _ = hs.Serve(ln) }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = conn.Close()
		_ = hs.Close()
	})
	return &sdkConn{conn: conn, rd: bufio.NewReaderSize(conn, 64<<10), mac: hmac.New(sha256.New, sdkDevKey)}
}

// sdkRecorder is the least ResponseWriter: a fresh header map per request, as net/http
// makes, and the status and body discarded.
type sdkRecorder struct {
	header http.Header
	status int
	n      int
}

func (w *sdkRecorder) Header() http.Header         { return w.header }
func (w *sdkRecorder) WriteHeader(status int)      { w.status = status }
func (w *sdkRecorder) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// sdkBody is a request body that can be refilled.
type sdkBody struct{ bytes.Reader }

func (*sdkBody) Close() error { return nil }

// BenchmarkSDKCeilingHandler measures the handler alone on the SDK ceiling's requests, read
// by http.ReadRequest before the timed loop and answered into memory: the server's own work
// without net/http's reading and writing, or the network.
func BenchmarkSDKCeilingHandler(b *testing.B) {
	for _, p := range sdkPhases {
		b.Run("op="+p.name, func(b *testing.B) {
			clock := func() time.Time { return sdkClock }
			srv := tableserver.New(reference.New(reference.WithClock(clock), reference.WithDeleteHold(0)), tableserver.WithClock(clock))
			var (
				buf     sdkBuffers
				raw     []byte
				scratch []byte
				mac     = hmac.New(sha256.New, sdkDevKey)
			)
			read := func(r sdkRequest) *http.Request {
				raw = r.appendTo(raw[:0], mac, &scratch)
				req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
				if err != nil {
					b.Fatal(err)
				}
				if req.ContentLength > 0 {
					body, _ := io.ReadAll(req.Body)
					req.Body = &sdkBody{}
					req.Body.(*sdkBody).Reset(body)
				}
				req.RemoteAddr = "127.0.0.1:1"
				return req
			}
			serve := func(r *http.Request) int {
				w := sdkRecorder{header: make(http.Header)}
				srv.ServeHTTP(&w, r)
				return w.status
			}
			if status := serve(read(sdkRequest{method: "POST", path: "/" + tableserver.DevAccountName + "/Tables", accept: sdkAcceptMin, body: []byte(`{"TableName":"` + sdkTable + `"}`)})); status != 201 {
				b.Fatalf("create table: status %d", status)
			}
			for i := 0; i < 20; i++ {
				if status := serve(read(sdkRequest{method: "POST", path: "/" + tableserver.DevAccountName + "/" + sdkTable, accept: sdkAcceptMin, body: appendSDKEntity(nil, "q", fmt.Sprintf("r%03d", i), i)})); status != 201 {
					b.Fatalf("load: status %d", status)
				}
			}
			const batch = 1000
			reqs := make([]*http.Request, batch)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				i := n % batch
				if i == 0 {
					b.StopTimer()
					for j := range reqs {
						reqs[j] = read(p.request(&buf, n+j))
					}
					b.StartTimer()
				}
				if status := serve(reqs[i]); status >= 300 {
					b.Fatalf("%s %d: status %d", p.name, n, status)
				}
				n++
			}
		})
	}
}
