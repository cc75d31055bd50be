package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Recorder is an http.RoundTripper that keeps every exchange it carries and writes them, one
// test-proxy file per test, into a directory: Begin names the test that follows, Flush
// writes what it sent. Credentials are sanitised before anything is kept. Exchanges outside
// a test (between Flush and Begin) are not kept. It is safe for concurrent use; a test whose
// requests overlapped in time is marked so in the file's Variables, since its order on the
// wire is not the order of the file.
type Recorder struct {
	Base http.RoundTripper
	Dir  string

	mu          sync.Mutex
	current     string
	entries     []Exchange
	inFlight    int
	overlapped  bool
	written     map[string]int
	writeErrors int
}

// OverlapVariable is set to "true" in the Variables of a recording whose requests overlapped.
const OverlapVariable = "conform.overlapping"

// maxRecordedBody bounds the body kept of one request or answer; larger bodies are kept cut.
const maxRecordedBody = 8 << 20

// NewRecorder records through base into dir, which it creates.
func NewRecorder(dir string, base http.RoundTripper) (*Recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &Recorder{Base: base, Dir: dir, written: map[string]int{}}, nil
}

// Begin starts the recording of one test.
func (r *Recorder) Begin(test string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current, r.entries, r.overlapped = test, nil, false
}

// RoundTrip sends req through Base and keeps the exchange.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = data
		req.Body = io.NopCloser(bytes.NewReader(data))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	r.mu.Lock()
	r.inFlight++
	if r.inFlight > 1 {
		r.overlapped = true
	}
	test := r.current
	r.mu.Unlock()
	resp, err := r.Base.RoundTrip(req)
	r.mu.Lock()
	r.inFlight--
	r.mu.Unlock()
	if err != nil || test == "" {
		return resp, err
	}
	respBody, readErr := io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody+1))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(respBody), rest), rest}
	if readErr != nil {
		return resp, nil // the caller reads the same error
	}
	if len(respBody) > maxRecordedBody {
		respBody = respBody[:maxRecordedBody]
	}
	x := Sanitize(Exchange{
		Method: req.Method, URI: req.URL.String(), RequestHeader: req.Header.Clone(), RequestBody: clip(reqBody),
		Status: resp.StatusCode, ResponseHeader: resp.Header.Clone(), ResponseBody: respBody,
	})
	r.mu.Lock()
	if r.current == test {
		r.entries = append(r.entries, x)
	}
	r.mu.Unlock()
	return resp, nil
}

func clip(b []byte) []byte {
	if len(b) > maxRecordedBody {
		return b[:maxRecordedBody]
	}
	return b
}

// Flush writes the current test's exchanges (if any) to a file named after the test and
// ends the test.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	test, entries, overlapped := r.current, r.entries, r.overlapped
	r.current, r.entries = "", nil
	if test == "" || len(entries) == 0 {
		r.mu.Unlock()
		return nil
	}
	base := fileName(test)
	r.written[base]++
	if n := r.written[base]; n > 1 {
		base = fmt.Sprintf("%s-%d", base, n)
	}
	r.mu.Unlock()
	rec := Recording{Name: base, Format: FormatTestProxy, Entries: entries, Variables: map[string]string{"conform.test": test}}
	if overlapped {
		rec.Variables[OverlapVariable] = "true"
	}
	data, err := WriteTestProxy(rec)
	if err == nil {
		err = os.WriteFile(filepath.Join(r.Dir, base+".json"), data, 0o644)
	}
	if err != nil {
		r.mu.Lock()
		r.writeErrors++
		r.mu.Unlock()
		return fmt.Errorf("record %s: %w", test, err)
	}
	return nil
}

// fileName turns a test's text into a file name of letters, digits, '-' and '_'.
func fileName(test string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(test) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_'
		switch {
		case ok:
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 120 {
			break
		}
	}
	s := strings.Trim(b.String(), "-.")
	if s == "" {
		return "test"
	}
	return s
}

// ErrNotHTTP is returned by callers that cannot record a backend whose traffic is not HTTP.
var ErrNotHTTP = errors.New("its traffic is not HTTP")
