package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// Call is one recorded call.
type Call struct {
	Op       string        `json:"op"`
	Sent     string        `json:"sent"`
	Got      string        `json:"got"`
	Status   int           `json:"status,omitempty"`
	Code     string        `json:"code,omitempty"`
	Request  string        `json:"requestId,omitempty"`
	Duration time.Duration `json:"duration"`
	// Mark classifies a failed call: MarkTransport, MarkMalformed, MarkNotExpressible, or
	// "" (no error, or a service error).
	Mark string `json:"mark,omitempty"`
	// Err is the call's error, when it failed.
	Err string `json:"error,omitempty"`
	// RawStatus and RawCode are the error status (300 or more) and code of a raw HTTP
	// exchange, which Status and Code leave out: a raw request's error answer is often what
	// its spec asked for. The code is x-ms-error-code, or the odata.error code of the body.
	RawStatus int    `json:"rawStatus,omitempty"`
	RawCode   string `json:"rawCode,omitempty"`
}

// Marks of failed calls (Call.Mark): reports classify specs by them, never by the text of
// a failure.
const (
	MarkTransport      = "transport"       // no answer came back (driver.IsTransport)
	MarkMalformed      = "malformed"       // an answer the driver could not read (driver.MalformedAnswerError)
	MarkNotExpressible = "not-expressible" // a request the driver cannot send (driver.ErrNotExpressible)
)

// MarkOf classifies err as Call.Mark does.
func MarkOf(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, driver.ErrNotExpressible):
		return MarkNotExpressible
	case driver.IsTransport(err):
		return MarkTransport
	}
	if _, ok := driver.AsMalformed(err); ok {
		return MarkMalformed
	}
	return ""
}

func (c Call) String() string {
	return fmt.Sprintf("%s %s -> %s (%s)", c.Op, c.Sent, c.Got, c.Duration.Round(time.Microsecond))
}

// Recorder wraps a Backend and records its calls. It keeps at most Limit calls (the most
// recent ones). It forwards the optional capabilities of the wrapped backend.
type Recorder struct {
	inner api.Backend
	*history
}

// history is shared by a Recorder and the recorders derived from it (WithSAS).
type history struct {
	limit   int
	mu      sync.Mutex
	calls   []Call
	dropped int
}

// DefaultLimit is the number of calls a Recorder keeps.
const DefaultLimit = 64

// New wraps b.
func New(b api.Backend) *Recorder {
	return &Recorder{inner: b, history: &history{limit: DefaultLimit}}
}

// Unwrap returns the wrapped backend.
func (r *Recorder) Unwrap() api.Backend { return r.inner }

// Calls returns the recorded calls, oldest first.
func (r *history) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// History renders the recorded calls, one a line.
func (r *history) History() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	if r.dropped > 0 {
		fmt.Fprintf(&b, "(%d earlier calls not kept)\n", r.dropped)
	}
	for i, c := range r.calls {
		fmt.Fprintf(&b, "%3d. %s\n", i+1, c)
	}
	return b.String()
}

func (r *history) add(op, sent string, start time.Time, got string, err error) {
	r.addRaw(op, sent, start, got, err, 0, "")
}

// addRaw is add for a raw HTTP exchange whose answer had error status rawStatus (or 0).
func (r *history) addRaw(op, sent string, start time.Time, got string, err error, rawStatus int, rawCode string) {
	c := Call{Op: op, Sent: sent, Got: got, Duration: time.Since(start), RawStatus: rawStatus, RawCode: rawCode}
	if err != nil {
		c.Got = "error: " + err.Error()
		c.Err, c.Mark = err.Error(), MarkOf(err)
		if e, ok := driver.AsError(err); ok {
			c.Status, c.Code, c.Request = e.Status, e.Code, e.RequestID
		} else if m, ok := driver.AsMalformed(err); ok {
			c.Status = m.Status
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) >= r.limit {
		r.calls = r.calls[1:]
		r.dropped++
	}
	r.calls = append(r.calls, c)
}

func (r *Recorder) CreateTable(ctx context.Context, name string) error {
	start := time.Now()
	err := r.inner.CreateTable(ctx, name)
	r.add("CreateTable", name, start, "created", err)
	return err
}

func (r *Recorder) DeleteTable(ctx context.Context, name string) error {
	start := time.Now()
	err := r.inner.DeleteTable(ctx, name)
	r.add("DeleteTable", name, start, "deleted", err)
	return err
}

func (r *Recorder) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	start := time.Now()
	p, err := r.inner.QueryTables(ctx, q)
	r.add("QueryTables", fmt.Sprintf("filter=%q top=%d next=%q", q.Filter, q.Top, q.NextTableName), start,
		fmt.Sprintf("%d tables, next=%q", len(p.Tables), p.NextTableName), err)
	return p, err
}

func (r *Recorder) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	start := time.Now()
	out, err := r.inner.InsertEntity(ctx, table, e)
	r.add("InsertEntity", table+" "+e.String(), start, "etag "+out.ETag, err)
	return out, err
}

func (r *Recorder) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	start := time.Now()
	etag, err := r.inner.UpdateEntity(ctx, table, e, mode, ifMatch)
	r.add("UpdateEntity("+mode.String()+")", fmt.Sprintf("%s %s If-Match=%q", table, e, ifMatch), start, "etag "+etag, err)
	return etag, err
}

func (r *Recorder) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	start := time.Now()
	err := r.inner.DeleteEntity(ctx, table, pk, rk, ifMatch)
	r.add("DeleteEntity", fmt.Sprintf("%s (%q,%q) If-Match=%q", table, pk, rk, ifMatch), start, "deleted", err)
	return err
}

func (r *Recorder) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	start := time.Now()
	e, err := r.inner.GetEntity(ctx, table, pk, rk, sel)
	r.add("GetEntity", fmt.Sprintf("%s (%q,%q) select=%v", table, pk, rk, sel), start, e.String(), err)
	return e, err
}

func (r *Recorder) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	start := time.Now()
	p, err := r.inner.QueryEntities(ctx, table, q)
	got := fmt.Sprintf("%d entities", len(p.Entities))
	if n := len(p.Entities); n > 0 {
		got += fmt.Sprintf(" first (%q,%q) last (%q,%q)", p.Entities[0].PartitionKey, p.Entities[0].RowKey,
			p.Entities[n-1].PartitionKey, p.Entities[n-1].RowKey)
	}
	if !p.Continuation.IsZero() {
		got += fmt.Sprintf(", continuation (%q,%q)", p.Continuation.NextPartitionKey, p.Continuation.NextRowKey)
	}
	r.add("QueryEntities", fmt.Sprintf("%s filter=%q top=%v select=%v continuation=(%q,%q)", table, q.Filter, q.Top,
		q.Select, q.Continuation.NextPartitionKey, q.Continuation.NextRowKey), start, got, err)
	return p, err
}

func (r *Recorder) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	start := time.Now()
	res, err := r.inner.SubmitBatch(ctx, table, ops)
	var sent strings.Builder
	fmt.Fprintf(&sent, "%s %d ops:", table, len(ops))
	for i, op := range ops {
		if i == 8 {
			fmt.Fprintf(&sent, " ...")
			break
		}
		fmt.Fprintf(&sent, " %s(%q,%q)", op.Kind, op.Entity.PartitionKey, op.Entity.RowKey)
	}
	r.add("SubmitBatch", sent.String(), start, fmt.Sprintf("%d results", len(res)), err)
	return res, err
}

// Info forwards driver.Describer.
func (r *Recorder) Info() driver.Info {
	if d, ok := r.inner.(driver.Describer); ok {
		return d.Info()
	}
	return driver.Info{}
}

// Capable returns a Backend that is r plus whichever optional capabilities the wrapped
// backend has, so that capability checks see through the recorder.
func (r *Recorder) Capable() api.Backend {
	sas, hasSAS := r.inner.(driver.SASIssuer)
	raw, hasRaw := r.inner.(driver.RawHTTP)
	switch {
	case hasSAS && hasRaw:
		return &struct {
			*Recorder
			driver.SASIssuer
			driver.RawHTTP
		}{r, sasRecorder{r, sas}, rawRecorder{r, raw}}
	case hasSAS:
		return &struct {
			*Recorder
			driver.SASIssuer
		}{r, sasRecorder{r, sas}}
	case hasRaw:
		return &struct {
			*Recorder
			driver.RawHTTP
		}{r, rawRecorder{r, raw}}
	}
	return r
}

type sasRecorder struct {
	r   *Recorder
	sas driver.SASIssuer
}

func (s sasRecorder) WithSAS(ctx context.Context, opts driver.SASOptions) (api.Backend, error) {
	start := time.Now()
	b, err := s.sas.WithSAS(ctx, opts)
	s.r.add("WithSAS", fmt.Sprintf("table=%s sp=%s pk=[%q..%q] rk=[%q..%q] si=%s sip=%s spr=%s", opts.Table, opts.Permissions,
		opts.StartPK, opts.EndPK, opts.StartRK, opts.EndRK, opts.Identifier, opts.IPRange, opts.Protocol), start, "signed", err)
	if err != nil {
		return nil, err
	}
	derived := &Recorder{inner: b, history: s.r.history}
	return derived.Capable(), nil
}

func (s sasRecorder) WithAccountSAS(ctx context.Context, opts driver.AccountSASOptions) (api.Backend, error) {
	start := time.Now()
	b, err := s.sas.WithAccountSAS(ctx, opts)
	s.r.add("WithAccountSAS", fmt.Sprintf("ss=%s srt=%s sp=%s sip=%s spr=%s", opts.Services, opts.ResourceTypes, opts.Permissions,
		opts.IPRange, opts.Protocol), start, "signed", err)
	if err != nil {
		return nil, err
	}
	derived := &Recorder{inner: b, history: s.r.history}
	return derived.Capable(), nil
}

type rawRecorder struct {
	r   *Recorder
	raw driver.RawHTTP
}

func (w rawRecorder) NewRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	return w.raw.NewRequest(ctx, method, path, body)
}

func (w rawRecorder) Do(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := w.raw.Do(req)
	got := ""
	if resp != nil {
		// wire.HeaderErrorCode by name: the recorder wraps every spec's backend, and what
		// specs reach may not include reference/wire (internal/archtest).
		got = resp.Status + " " + resp.Header.Get("x-ms-error-code")
	}
	var rawStatus int
	var rawCode string
	if resp != nil && resp.StatusCode >= 300 {
		rawStatus, rawCode = resp.StatusCode, resp.Header.Get("x-ms-error-code")
		if rawCode == "" && resp.Body != nil {
			// The code of a JSON error body (Cosmos DB for Table sends no header); the body is
			// read here, bounded, and handed on unchanged.
			b, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
			if rerr == nil {
				rawCode = odataErrorCode(b)
			}
		}
	}
	w.r.addRaw("HTTP", req.Method+" "+req.URL.Path, start, got, err, rawStatus, rawCode)
	if resp != nil && resp.Body != nil {
		resp.Body = &readRecorder{ReadCloser: resp.Body, r: w.r, what: req.Method + " " + req.URL.Path, start: start}
	}
	return resp, err
}

// readRecorder records a failure to read an answer's body as a transport failure of the
// exchange (the answer did not arrive whole).
type readRecorder struct {
	io.ReadCloser
	r      *Recorder
	what   string
	start  time.Time
	failed bool
}

func (b *readRecorder) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && !b.failed {
		b.failed = true
		b.r.add("HTTP read", b.what, b.start, "", &driver.TransportError{Op: "read the answer to " + b.what, Err: err})
	}
	return n, err
}

// maxErrorBody bounds what the recorder reads of a raw error answer to find its code.
const maxErrorBody = 64 << 10

// odataErrorCode is the code of a JSON odata.error body, or "".
func odataErrorCode(body []byte) string {
	var doc struct {
		Error struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	_ = json.Unmarshal(body, &doc)
	return doc.Error.Code
}

// ErrorAnswers lists the error answers (status 300 or more, with their codes) of calls,
// oldest first: the service errors of backend calls and the error answers of raw exchanges.
func ErrorAnswers(calls []Call) []Answer {
	var out []Answer
	for _, c := range calls {
		switch {
		case c.Status >= 300:
			out = append(out, Answer{Status: c.Status, Code: c.Code})
		case c.RawStatus >= 300:
			out = append(out, Answer{Status: c.RawStatus, Code: c.RawCode})
		}
	}
	return out
}

// Answer is one error answer: its HTTP status and error code.
type Answer struct {
	Status int    `json:"status"`
	Code   string `json:"code,omitempty"`
}
